import 'reflect-metadata';
import { createLogger, exitOnSignals } from '@app/observability';
import { createWorkerApp } from './worker.app';

async function main() {
  const { app, config, logger } = await createWorkerApp();
  await app.init();
  await app.startAllMicroservices();
  await app.listen(config.WORKER_METRICS_PORT, '0.0.0.0');
  logger.info(`consuming; health and metrics on :${config.WORKER_METRICS_PORT}`);
  // SIGTERM: the dispatcher stops claiming, the consumer finishes and commits its batch, then the pool closes.
  exitOnSignals(app, logger, config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err) => {
  // Before the app's own logger exists (a bad variable), or as start-up fails.
  createLogger('worker', 'info').fatal(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
