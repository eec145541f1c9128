import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';
import { visibleJson, visibleText } from '@app/contracts';

export type LogFormat = 'json' | 'pretty';

/**
 * The logs of both apps, one format: JSON lines with the level as a word (`"level":"info"`) for machines, or,
 * with LOG_FORMAT=pretty (what `npm start` sets), one coloured line per entry for a person in a terminal.
 * Tokens and secrets are redacted wherever they appear in a log object; messages never carry them. Control
 * characters in what is logged (a receiver's error, a URL, a plant's name: text others wrote) reach the terminal
 * as escapes, never raw (visibleLog). `destination`: where the lines go (tests); standard output by default.
 */
export function createLogger(
  app: string,
  level: string,
  format: LogFormat = logFormatFromEnv(),
  destination?: DestinationStream,
): Logger {
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
    hooks: { streamWrite: visibleLog[format] },
  };
  if (format === 'pretty') return pino(options, prettyStream(destination));
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Each line made safe for a terminal just before it is written. JSON: JSON.stringify escapes C0 controls (ESC is
 * `\u001b`) but writes DEL and C1 raw, which a terminal may obey (U+009B is CSI); escaped too, the value is the
 * same to a collector. Pretty: pino-pretty parses the line back and prints its strings as they are (its own
 * stripping misses C1 in an entry's fields), so every string becomes visible text (`\x1b`) before it gets there.
 */
const visibleLog: Record<LogFormat, (line: string) => string> = {
  json: visibleJson,
  pretty: (line) => `${JSON.stringify(visibleStrings(JSON.parse(line)))}\n`,
};

const visibleStrings = (v: unknown): unknown =>
  typeof v === 'string'
    ? visibleText(v)
    : Array.isArray(v)
      ? v.map(visibleStrings)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [visibleText(k), visibleStrings(x)]))
        : v;

function prettyStream(destination?: DestinationStream): DestinationStream {
  return pretty({
    ...(destination ? { destination } : {}),
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
