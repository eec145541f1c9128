import type { Logger } from 'pino';
import { redactUrl, unreachable, WorkerConfig } from '@app/config';
import { checkTls, explainKafkaError, prepareTopics } from '@app/kafka';
import { migrationPool, runMigrations, sealCredentials, secretBoxFrom } from '@app/persistence';

/**
 * The worker owns the shared infrastructure: it migrates the database, seals subscriber credentials under the
 * current SECRETS_KEY (re-sealing those of a previous key), and creates the Kafka topics (with
 * their partition count, replication factor and min.insync.replicas) before it consumes. Both steps are
 * idempotent and safe to run from several replicas at once. The gateway only checks (see its
 * infrastructure-check.ts); the Kubernetes Job runs the same function through setup/main.ts. Both steps run as
 * DATABASE_MIGRATION_URL's role when it is set (see docs/database.md), under DATABASE_MIGRATION_TIMEOUT_MS.
 */
export async function prepareInfrastructure(config: WorkerConfig, logger: Logger): Promise<void> {
  const { pool, urlVariable, url } = migrationPool(config, 'plant-store-setup');
  try {
    const applied = await runMigrations(pool, (m) => logger.info(`applying ${m}`)).catch((err) => {
      throw unreachable('PostgreSQL', urlVariable, redactUrl(url), err);
    });
    logger.info(applied.length ? `applied migrations ${applied.join(', ')}` : 'database schema is up to date');
    const box = secretBoxFrom(config);
    const { sealed, resealed } = await sealCredentials(pool, box);
    if (sealed + resealed > 0)
      logger.info(`subscriber credentials: ${sealed} sealed, ${resealed} re-sealed under key ${box.currentKeyId}`);
  } finally {
    await pool.end();
  }
  // The consumer's group (Nest appends "-server") and the dead-letter archive's: a missing ACL stops us here.
  const groups = [`${config.WORKER_GROUP_ID}-server`, `${config.WORKER_GROUP_ID}-dead-letters`];
  const created = await checkTls(config)
    .then(() => prepareTopics(config, groups))
    .catch((err) => {
      throw explainKafkaError(err, config);
    });
  logger.info(created.length ? `created topics ${created.join(', ')}` : 'Kafka topics are in place');
}
