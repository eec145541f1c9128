import { Pool, types } from 'pg';
import { boundedClient } from './bounded-client';
import { databaseConnection } from './tls';

// bigint (int8) columns come back as strings by default; plant ids are capped at 2^53 - 1 on the way in,
// so they convert to numbers exactly.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

export const PG_POOL = Symbol('PG_POOL');

/** The bounds every connection of a pool works under (docs/database.md). */
export interface DatabaseBounds {
  /** PostgreSQL cancels a statement running longer (statement_timeout); the connection stays usable. */
  statementTimeoutMs: number;
  /** We give up on a query unanswered this long (a frozen or cut-off server) and drop its connection. */
  queryTimeoutMs: number;
  /** Opening a connection, and waiting for a free one. */
  connectTimeoutMs: number;
  /** TCP keep-alive after this much silence; 0: off. */
  keepAliveMs: number;
  /** The variable that sets queryTimeoutMs, for the timeout's message. */
  timeoutVariable?: string;
}

export interface PoolOptions extends DatabaseBounds {
  url: string;
  max: number;
  applicationName: string;
  /** The variable the URL came from, for messages: DATABASE_URL or DATABASE_MIGRATION_URL. */
  urlVariable?: string;
}

/** The bounds the settings give (libs/config: DATABASE_*_MS). */
export const databaseBoundsFrom = (c: {
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_QUERY_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_KEEPALIVE_MS: number;
}): DatabaseBounds => ({
  statementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
  queryTimeoutMs: c.DATABASE_QUERY_TIMEOUT_MS,
  connectTimeoutMs: c.DATABASE_CONNECT_TIMEOUT_MS,
  keepAliveMs: c.DATABASE_KEEPALIVE_MS,
});

/**
 * A bound of its own for statements that legitimately run long (migrations, retention's deletes): the server's
 * bound is `ms`, ours a little longer, so that PostgreSQL's cancel normally comes first.
 */
export const longStatementBounds = (general: DatabaseBounds, ms: number, variable: string): DatabaseBounds => ({
  ...general,
  statementTimeoutMs: ms,
  queryTimeoutMs: ms + Math.max(5000, general.queryTimeoutMs - general.statementTimeoutMs),
  timeoutVariable: variable,
});

export function createPool(o: PoolOptions): Pool {
  const urlVariable = o.urlVariable ?? 'DATABASE_URL';
  const connection = databaseConnection(o.url, urlVariable);
  const pool = new Pool({
    connectionString: connection.connectionString,
    ssl: connection.ssl,
    max: o.max,
    application_name: o.applicationName,
    connectionTimeoutMillis: o.connectTimeoutMs,
    statement_timeout: o.statementTimeoutMs,
    // A transaction left open by a client that stopped (frozen, partitioned) must not hold its locks forever.
    idle_in_transaction_session_timeout: o.queryTimeoutMs,
    keepAlive: o.keepAliveMs > 0,
    keepAliveInitialDelayMillis: o.keepAliveMs,
    Client: boundedClient({
      queryTimeoutMs: o.queryTimeoutMs,
      timeoutVariable: o.timeoutVariable ?? 'DATABASE_QUERY_TIMEOUT_MS',
      connection,
      urlVariable,
    }),
  });
  // An idle client losing its connection (database restart) must not crash the process; the next query
  // gets a fresh connection.
  pool.on('error', () => undefined);
  return pool;
}

/** SQLSTATE classes that mean "this data can never be stored": retrying the same row will fail again. */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

export async function isDatabaseUp(pool: Pool): Promise<boolean> {
  try {
    await pool.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}
