import { ProblemException } from '@app/observability';

/** A query the database did not answer within DATABASE_QUERY_TIMEOUT_MS: its connection was dropped. */
export class DatabaseTimeoutError extends Error {
  readonly code = 'DATABASE_TIMEOUT';
  constructor(
    readonly timeoutMs: number,
    variable = 'DATABASE_QUERY_TIMEOUT_MS',
  ) {
    super(`PostgreSQL did not answer within ${timeoutMs} ms (${variable}); the connection was dropped`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** A connection that could not be opened, said in terms of the setting to change. Its cause is the driver's error. */
export class DatabaseConnectError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'DatabaseConnectError';
  }
}

// SQLSTATE classes and codes that say "not now" rather than "never": connection exceptions (08), the statement
// cancelled by statement_timeout or an operator (57014), a server shutting down or starting (57P01-57P03),
// too many connections and other resource shortages (53), a serialization failure or deadlock (40).
const TRANSIENT_SQLSTATE = /^(08|53|40)|^57014$|^57P0[123]$/;

// node-postgres and Node say "the connection is gone or never came" in words, not codes.
const TRANSIENT_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection timeout|timeout expired|not queryable|Query read timeout/i;

const TRANSIENT_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * The database is away, slow or overloaded, so the same request may work shortly: a worker retries it, the admin
 * API answers 503 with Retry-After. Not a data error (those never work) and not a bug (those are 500s).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseTimeoutError || err instanceof DatabaseConnectError) return true;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof e?.code === 'string' && (TRANSIENT_SQLSTATE.test(e.code) || TRANSIENT_ERRNO.has(e.code))) return true;
  if (typeof e?.message === 'string' && TRANSIENT_MESSAGE.test(e.message)) return true;
  return e?.cause !== undefined && e.cause !== err && isDatabaseUnavailable(e.cause);
}

/** Seconds a client is asked to wait before trying again while the database is away. */
const RETRY_AFTER_S = 5;

/**
 * For the HTTP APIs (ProblemFilter): a database that is away or too slow is a 503 problem that says to retry, not
 * a 500. The detail says nothing of the server (its address, the driver's words): that is for the log.
 */
export function databaseProblem(err: unknown): ProblemException | undefined {
  if (!isDatabaseUnavailable(err)) return undefined;
  const detail =
    err instanceof DatabaseTimeoutError
      ? 'The database did not answer in time; retry shortly'
      : 'The database is unavailable; retry shortly';
  return ProblemException.of('unavailable', detail, {}, { 'retry-after': String(RETRY_AFTER_S) });
}
