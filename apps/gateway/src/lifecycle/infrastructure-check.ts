import type { Logger } from 'pino';
import { GatewayConfig, redactUrl } from '@app/config';
import { checkTls, explainKafkaError, KafkaAccessError, missingGatewayTopics, workerConsumerGroup } from '@app/kafka';
import { createPool, databaseBoundsFrom, SCHEMA_VERSION, schemaVersion } from '@app/persistence';

const POLL_MS = 1000;
/** Long enough for a worker starting beside the gateway; short enough that a missing worker is said plainly. */
export const INFRASTRUCTURE_WAIT_MS = 60_000;

/**
 * The worker owns the schema and the topics (apps/worker/src/setup); the gateway only checks that they are
 * there before it takes webhooks, waiting (bounded) for a worker starting beside it, and then stops with a
 * message that says what is missing and who creates it.
 */
export async function awaitInfrastructure(
  config: GatewayConfig,
  logger: Logger,
  timeoutMs = INFRASTRUCTURE_WAIT_MS,
): Promise<void> {
  await checkTls(config); // an untrusted certificate is said now, not after a minute of retries
  const pool = createPool({
    url: config.DATABASE_URL,
    max: 1,
    applicationName: 'plant-store-gateway-check',
    ...databaseBoundsFrom(config),
  });
  const deadline = Date.now() + timeoutMs;
  let reported = '';
  try {
    for (;;) {
      const missing = await whatIsMissing(config, pool);
      if (missing.length === 0) return;
      const what = missing.join('; ');
      if (Date.now() >= deadline) {
        throw new Error(
          `${what} after ${timeoutMs / 1000} s: check DATABASE_URL and KAFKA_BROKERS, and start the worker ` +
            '(or run its setup job) against the same database and Kafka',
        );
      }
      if (what !== reported) logger.info(`waiting for the worker to prepare: ${what}`);
      reported = what;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await pool.end();
  }
}

async function whatIsMissing(config: GatewayConfig, pool: ReturnType<typeof createPool>): Promise<string[]> {
  const missing: string[] = [];
  try {
    const version = await schemaVersion(pool);
    if (version < SCHEMA_VERSION)
      missing.push(`database schema at version ${version}, this gateway needs ${SCHEMA_VERSION}`);
  } catch (err) {
    missing.push(
      `PostgreSQL unreachable at DATABASE_URL=${redactUrl(config.DATABASE_URL)} (${(err as Error).message})`,
    );
  }
  try {
    const topics = await missingGatewayTopics(config, workerConsumerGroup(config.WORKER_GROUP_ID));
    if (topics.length > 0) missing.push(`Kafka topics ${topics.join(', ')} do not exist`);
  } catch (err) {
    // A refused login, an untrusted certificate, a missing ACL: no worker will fix those, so no waiting.
    const explained = explainKafkaError(err, config);
    if (explained instanceof KafkaAccessError) throw explained;
    missing.push(`Kafka unreachable at KAFKA_BROKERS=${config.KAFKA_BROKERS.join(',')} (${(err as Error).message})`);
  }
  return missing;
}
