import 'reflect-metadata';
import { createLogger, exitOnSignals } from '@app/observability';
import { createGatewayApp } from './gateway.app';
import { ShutdownState } from './lifecycle/shutdown-state';

async function main() {
  const { app, config, connections, logger } = await createGatewayApp();
  await app.listen(config.PORT, config.HOST);
  logger.info(`listening on http://${config.HOST}:${config.PORT}`);
  // SIGTERM: fail readiness; for SHUTDOWN_IDLE_WAIT_MS keep answering on open keep-alive connections (503,
  // Connection: close) so a request already on its way is answered rather than reset; then stop accepting,
  // finish in-flight requests, flush the producer, exit.
  exitOnSignals(app, logger, config.SHUTDOWN_DRAIN_MS, async () => {
    app.get(ShutdownState).draining = true;
    await connections.closedOrAfter(config.SHUTDOWN_IDLE_WAIT_MS);
  });
}

main().catch((err) => {
  // Before the app's own logger exists (a bad variable), or as start-up fails.
  createLogger('gateway', 'info').fatal(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
