import 'reflect-metadata';
import { exitOnSignals } from '@app/observability';
import { createGatewayApp } from './gateway.app';
import { ShutdownState } from './health/shutdown-state';

async function main() {
  const { app, config } = await createGatewayApp();
  await app.listen(config.PORT, config.HOST);
  console.log(JSON.stringify({ level: 'info', app: 'gateway', msg: `listening on http://${config.HOST}:${config.PORT}` }));
  // SIGTERM: fail readiness, stop accepting, finish in-flight requests, flush the producer, exit.
  exitOnSignals(app, 'gateway', config.SHUTDOWN_DRAIN_MS, () => (app.get(ShutdownState).draining = true));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
