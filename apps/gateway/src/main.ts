import 'reflect-metadata';
import { createLogger, exitOnSignals, startFlowSummary } from '@app/observability';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { createGatewayApp } from './gateway.app';
import { ShutdownState } from './lifecycle/shutdown-state';

async function main() {
  const { app, config, connections, logger } = await createGatewayApp();
  await app.listen(config.PORT, config.HOST);
  logger.info(`listening on http://${config.HOST}:${config.PORT}`);
  const webhook = (status: (s: number) => boolean) => (l: Partial<Record<string, string | number>>) =>
    l.route === '/plant/webhook' && status(Number(l.status));
  const requests = app.get(GatewayMetrics).requests;
  const stopSummary = startFlowSummary(logger, config.LOG_SUMMARY_MS, [
    { label: 'accepted', counter: requests, where: webhook((s) => s === 200) },
    { label: 'refused', counter: requests, where: webhook((s) => s >= 400 && s < 500) },
    { label: 'unavailable (503)', counter: requests, where: webhook((s) => s === 503) },
  ]);
  // SIGTERM: fail readiness; for SHUTDOWN_IDLE_WAIT_MS keep answering on open keep-alive connections (503,
  // Connection: close) so a request already on its way is answered rather than reset; then stop accepting,
  // finish in-flight requests, flush the producer, exit.
  exitOnSignals(app, logger, config.SHUTDOWN_DRAIN_MS, async () => {
    stopSummary();
    app.get(ShutdownState).draining = true;
    await connections.closedOrAfter(config.SHUTDOWN_IDLE_WAIT_MS);
  });
}

main().catch((err) => {
  // Before the app's own logger exists (a bad variable), or as start-up fails.
  createLogger('gateway', 'info').fatal(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
