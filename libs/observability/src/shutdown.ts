import { INestApplication } from '@nestjs/common';

/**
 * SIGTERM/SIGINT handling for both apps: run `before` (e.g. fail readiness), then `app.close()`, which runs
 * Nest's hooks in order (destroy, dispose of servers and consumers, then onApplicationShutdown), and exit. A hard
 * deadline below the orchestrator's grace period turns a stuck shutdown into an exit instead of a SIGKILL.
 * Used instead of enableShutdownHooks(), whose order closes resources before the Kafka consumer.
 */
export function exitOnSignals(
  app: INestApplication,
  name: string,
  deadlineMs: number,
  before: () => void | Promise<void> = () => {},
) {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), deadlineMs).unref();
    console.log(JSON.stringify({ level: 'info', app: name, msg: `${signal}: shutting down` }));
    try {
      await before();
      await app.close();
      process.exit(0);
    } catch (err) {
      console.error(JSON.stringify({ level: 'error', app: name, msg: `shutdown failed: ${(err as Error)?.stack ?? err}` }));
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
