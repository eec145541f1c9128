import 'reflect-metadata';
import { gatewayEnvSchema, loadConfig } from '@app/config';
import { createGatewayApp } from './gateway.app';
import { ShutdownState } from './health/shutdown-state';

async function main() {
  const config = loadConfig(gatewayEnvSchema); // fails fast, naming the bad variable
  const app = await createGatewayApp();
  await app.listen(config.PORT, config.HOST);
  console.log(JSON.stringify({ level: 'info', app: 'gateway', msg: `listening on http://${config.HOST}:${config.PORT}` }));

  // SIGTERM: fail readiness, stop accepting, finish in-flight requests, flush the producer, exit.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.get(ShutdownState).draining = true;
    setTimeout(() => process.exit(1), config.SHUTDOWN_DRAIN_MS).unref();
    console.log(JSON.stringify({ level: 'info', app: 'gateway', msg: `${signal}: draining` }));
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
