import type { Logger } from 'pino';
import { GatewayConfig, redactUrl } from '@app/config';
import { missingTopicsOn, topicSettingsFrom } from '@app/kafka';
import { createPool, SCHEMA_VERSION, schemaVersion } from '@app/persistence';

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
  const pool = createPool(config.DATABASE_URL, 1, 'plant-store-gateway-check');
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
    const topics = await missingTopicsOn(config.KAFKA_BROKERS, topicSettingsFrom(config));
    if (topics.length > 0) missing.push(`Kafka topics ${topics.join(', ')} do not exist`);
  } catch (err) {
    missing.push(`Kafka unreachable at KAFKA_BROKERS=${config.KAFKA_BROKERS.join(',')} (${(err as Error).message})`);
  }
  return missing;
}
