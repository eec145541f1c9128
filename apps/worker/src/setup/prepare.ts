import type { Logger } from 'pino';
import { redactUrl, unreachable, WorkerConfig } from '@app/config';
import { ensureTopicsOn, topicSettingsFrom } from '@app/kafka';
import { createPool, runMigrations, sealCredentials, secretBoxFrom } from '@app/persistence';

/**
 * The worker owns the shared infrastructure: it migrates the database, seals subscriber credentials under the
 * current SECRETS_KEY (re-sealing those of a previous key), and creates the Kafka topics (with
 * their partition count, replication factor and min.insync.replicas) before it consumes. Both steps are
 * idempotent and safe to run from several replicas at once. The gateway only checks (see its
 * infrastructure-check.ts); the Kubernetes Job runs the same function through setup/main.ts.
 */
export async function prepareInfrastructure(config: WorkerConfig, logger: Logger): Promise<void> {
  const pool = createPool(config.DATABASE_URL, 1, 'plant-store-setup');
  try {
    const applied = await runMigrations(pool, (m) => logger.info(`applying ${m}`)).catch((err) => {
      throw unreachable('PostgreSQL', 'DATABASE_URL', redactUrl(config.DATABASE_URL), err);
    });
    logger.info(applied.length ? `applied migrations ${applied.join(', ')}` : 'database schema is up to date');
    const box = secretBoxFrom(config);
    const { sealed, resealed } = await sealCredentials(pool, box);
    if (sealed + resealed > 0)
      logger.info(`subscriber credentials: ${sealed} sealed, ${resealed} re-sealed under key ${box.currentKeyId}`);
  } finally {
    await pool.end();
  }
  const created = await ensureTopicsOn(config.KAFKA_BROKERS, topicSettingsFrom(config)).catch((err) => {
    throw unreachable('Kafka', 'KAFKA_BROKERS', config.KAFKA_BROKERS.join(','), err);
  });
  logger.info(created.length ? `created topics ${created.join(', ')}` : 'Kafka topics already exist');
}
