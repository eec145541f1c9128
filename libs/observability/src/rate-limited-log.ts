export type LogLevelName = 'info' | 'warn' | 'error';
/** Where a line goes: a pino logger (`pinoSink`) or Nest's Logger (`nestSink`). */
export type LogSink = (level: LogLevelName, message: string, fields: object) => void;

export const pinoSink =
  (logger: { [L in LogLevelName]: (fields: object, message: string) => void }): LogSink =>
  (level, message, fields) =>
    logger[level](fields, message);

export const nestSink =
  (logger: { log(m: string): void; warn(m: string): void; error(m: string): void }): LogSink =>
  (level, message) =>
    level === 'info' ? logger.log(message) : logger[level](message);

import { LRUCache } from 'lru-cache';

/** At most this many keys are remembered; the oldest are forgotten first (a flood of keys cannot grow memory). */
const MAX_KEYS = 1000;

/**
 * Log lines that repeat under a fault (every refused request, every failing delivery of a dead subscriber):
 * at most one line per key per `windowMs`; the next line that gets through says how many were held back.
 */
export class RateLimitedLog {
  private readonly seen = new LRUCache<string, { at: number; held: number }>({ max: MAX_KEYS });

  constructor(
    private readonly sink: LogSink,
    private readonly windowMs = 10_000,
  ) {}

  log(level: LogLevelName, key: string, fields: object, message: string, now = Date.now()): boolean {
    const entry = this.seen.get(key);
    if (entry && now - entry.at < this.windowMs) {
      entry.held++;
      return false;
    }
    const held = entry?.held ?? 0;
    this.seen.set(key, { at: now, held: 0 });
    const suffix = held > 0 ? ` (and ${held} more like it in the last ${this.windowMs / 1000}s)` : '';
    this.sink(level, message + suffix, fields);
    return true;
  }
}
