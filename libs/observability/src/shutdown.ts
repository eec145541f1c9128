import { INestApplication } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * SIGTERM/SIGINT handling for both apps: run `before` (e.g. fail readiness), then `app.close()`, which runs
 * Nest's hooks in order (destroy, dispose of servers and consumers, then onApplicationShutdown), and exit. A hard
 * deadline below the orchestrator's grace period turns a stuck shutdown into an exit instead of a SIGKILL.
 * Used instead of enableShutdownHooks(), whose order closes resources before the Kafka consumer.
 */
export function exitOnSignals(
  app: INestApplication,
  logger: Logger,
  deadlineMs: number,
  before: () => void | Promise<void> = () => {},
) {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), deadlineMs).unref();
    logger.info(`${signal}: shutting down`);
    try {
      await before();
      await app.close();
      logger.flush();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      logger.flush();
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
