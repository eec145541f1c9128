import 'reflect-metadata';
import { createWorkerApp } from './worker.app';

async function main() {
  const { app, config } = await createWorkerApp();
  await app.init(); // migrations run here, before the consumer takes its first batch
  await app.startAllMicroservices();
  await app.listen(config.WORKER_METRICS_PORT, '0.0.0.0');
  console.log(JSON.stringify({ level: 'info', app: 'worker', msg: `consuming; health and metrics on :${config.WORKER_METRICS_PORT}` }));

  // Not enableShutdownHooks(): app.close() stops the consumer (finishing and committing the batch in flight)
  // before onApplicationShutdown closes the database pool. A hard deadline keeps us under the grace period.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS).unref();
    console.log(JSON.stringify({ level: 'info', app: 'worker', msg: `${signal}: stopping consumer, then dispatcher, then pool` }));
    await app.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
