import { LogEntry, logLevel } from 'kafkajs';
import type { Logger } from 'pino';

// kafkajs logs through the app's pino logger, in the app's format, instead of its own JSON shape. States the
// client goes through on a healthy start and retries by itself (the group coordinator still loading, a
// rebalance, a leader moving) are debug lines, not ERRORs; a broker that cannot be reached, which it also
// retries, is a warning. What finally fails reaches our code as an error and is logged there.

const RETRIED_QUIETLY = [
  /coordinator is (loading|not available)/i,
  /group coordinator/i,
  /rebalanc/i,
  /not (the )?leader for/i,
  /no leader for this topic-partition/i,
  /unknown topic or partition/i,
  /does not host this topic-partition/i, // the set-up asking whether a topic exists yet
];
const RETRIED_LOUDLY = [/connection error/i, /failed to connect/i, /ECONNREFUSED/, /connection timeout/i];

let sink: Logger | null = null;

/** Called once per process, as soon as the app's logger exists. */
export function routeKafkaLogsTo(logger: Logger) {
  sink = logger;
}

/** The logCreator for kafkaClientConfig, or undefined before routeKafkaLogsTo (kafkajs' own then). */
export function kafkaLogCreator() {
  const logger = sink;
  if (!logger) return undefined;
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, error, broker, clientId, retryCount } = log as LogEntry['log'] & Record<string, unknown>;
      const text = `kafkajs ${namespace}: ${message}${error ? ` (${String(error)})` : ''}`;
      const both = `${message} ${String(error ?? '')}`;
      const fields = { broker, clientId, retryCount };
      if (RETRIED_QUIETLY.some((r) => r.test(both))) return logger.debug(fields, text);
      if (level === logLevel.ERROR && RETRIED_LOUDLY.some((r) => r.test(both))) return logger.warn(fields, text);
      if (level === logLevel.ERROR) return logger.error(fields, text);
      if (level === logLevel.WARN) return logger.warn(fields, text);
      if (level === logLevel.INFO) return logger.info(fields, text);
      return logger.debug(fields, text);
    };
}
