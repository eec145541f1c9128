import 'reflect-metadata';
import { loadConfig, workerEnvSchema } from '@app/config';
import { routeKafkaLogsTo } from '@app/kafka';
import { createLogger } from '@app/observability';
import { prepareInfrastructure } from './prepare';

/**
 * One-shot set-up for a cluster (the Kubernetes Job, or by hand): what the worker does before it consumes,
 * without consuming. Idempotent, so it is safe to run again.
 */
async function setup() {
  const config = loadConfig(workerEnvSchema);
  const logger = createLogger('setup', config.LOG_LEVEL, config.LOG_FORMAT);
  routeKafkaLogsTo(logger);
  await prepareInfrastructure(config, logger);
}

setup().catch((err) => {
  createLogger('setup', 'info').fatal(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
