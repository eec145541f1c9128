import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

/**
 * The logs of both apps, one format: JSON lines with the level as a word (`"level":"info"`) for machines, or,
 * with LOG_FORMAT=pretty (what `npm start` sets), one coloured line per entry for a person in a terminal.
 * Tokens and secrets are redacted wherever they appear in a log object; messages never carry them.
 */
export function createLogger(app: string, level: string, format: LogFormat = logFormatFromEnv()): Logger {
  const options: pino.LoggerOptions = {
    name: app,
    level,
    base: { app },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.token', '*.secret', 'token', 'secret'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return format === 'pretty' ? pino(options, prettyStream()) : pino(options);
}

function prettyStream(): DestinationStream {
  return pretty({
    colorize: true,
    sync: true,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname,app,name,context',
    messageFormat: '{if context}[{context}] {end}{msg}',
    singleLine: true,
  });
}

/** LOG_FORMAT before the configuration is parsed (a start-up failure is logged in the same format). */
const logFormatFromEnv = (): LogFormat => (process.env.LOG_FORMAT === 'pretty' ? 'pretty' : 'json');

/** Nest's own start-up chatter (module wiring, every route mapped): for debugging Nest, not for running us. */
const STARTUP_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
  'NestMicroservice',
]);

/** Nest's framework logs, written through the same pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    if (context && STARTUP_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
