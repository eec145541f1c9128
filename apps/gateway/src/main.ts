import 'reflect-metadata';
import { exitOnSignals } from '@app/observability';
import { createGatewayApp } from './gateway.app';
import { ShutdownState } from './health/shutdown-state';

async function main() {
  const { app, config, connections } = await createGatewayApp();
  await app.listen(config.PORT, config.HOST);
  console.log(JSON.stringify({ level: 'info', app: 'gateway', msg: `listening on http://${config.HOST}:${config.PORT}` }));
  // SIGTERM: fail readiness; for SHUTDOWN_IDLE_WAIT_MS keep answering on open keep-alive connections (503,
  // Connection: close) so a request already on its way is answered rather than reset; then stop accepting,
  // finish in-flight requests, flush the producer, exit.
  exitOnSignals(app, 'gateway', config.SHUTDOWN_DRAIN_MS, async () => {
    app.get(ShutdownState).draining = true;
    await connections.closedOrAfter(config.SHUTDOWN_IDLE_WAIT_MS);
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
