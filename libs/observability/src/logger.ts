import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** JSON logs (pino) for both apps. Tokens and secrets are redacted wherever they appear in a log object. */
export function createLogger(app: string, level: string): Logger {
  return pino({
    name: app,
    level,
    base: { app },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.token', '*.secret', 'token', 'secret'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** Nest's framework logs, written through the same pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
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
