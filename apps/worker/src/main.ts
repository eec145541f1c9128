import 'reflect-metadata';
import { AddressInfo } from 'node:net';
import { createLogger, exitOnSignals, startFlowSummary } from '@app/observability';
import { WorkerMetrics } from './metrics/worker-metrics';
import { createWorkerApp } from './worker.app';

async function main() {
  const { app, config, logger } = await createWorkerApp();
  await app.init();
  await app.startAllMicroservices();
  await app.listen(config.WORKER_METRICS_PORT, config.WORKER_METRICS_HOST);
  const { port } = app.getHttpServer().address() as AddressInfo; // the one chosen, when WORKER_METRICS_PORT=0
  logger.info(`consuming; health and metrics on http://${config.WORKER_METRICS_HOST}:${port}`);
  const m = app.get(WorkerMetrics);
  const outcome = (o: string) => (l: Partial<Record<string, string | number>>) => l.outcome === o;
  const stopSummary = startFlowSummary(logger, config.LOG_SUMMARY_MS, [
    { label: 'stored', counter: m.events, where: outcome('stored') },
    { label: 'delivered', counter: m.deliveries, where: outcome('succeeded') },
    { label: 'retrying', counter: m.deliveries, where: outcome('retried') },
    { label: 'failed', counter: m.deliveries, where: outcome('failed') },
    { label: 'dead-lettered', counter: m.events, where: outcome('dead_lettered') },
    { label: 'consumer lag', gauge: m.consumerLag },
    { label: 'pending deliveries', gauge: m.deliveriesPending },
  ]);
  // SIGTERM: the dispatcher stops claiming, the consumer finishes and commits its batch, then the pool closes.
  exitOnSignals(app, logger, config.SHUTDOWN_TIMEOUT_MS, stopSummary);
}

main().catch((err) => {
  // Before the app's own logger exists (a bad variable), or as start-up fails.
  createLogger('worker', 'info').fatal(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
