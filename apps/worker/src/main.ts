import 'reflect-metadata';
import { exitOnSignals } from '@app/observability';
import { createWorkerApp } from './worker.app';

async function main() {
  const { app, config } = await createWorkerApp();
  await app.init(); // migrations run here, before the consumer takes its first batch
  await app.startAllMicroservices();
  await app.listen(config.WORKER_METRICS_PORT, '0.0.0.0');
  console.log(JSON.stringify({ level: 'info', app: 'worker', msg: `consuming; health and metrics on :${config.WORKER_METRICS_PORT}` }));
  // SIGTERM: the dispatcher stops claiming, the consumer finishes and commits its batch, then the pool closes.
  exitOnSignals(app, 'worker', config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
