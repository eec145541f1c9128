import { Pool, types } from 'pg';

// bigint (int8) columns come back as strings by default; plant ids are capped at 2^53 - 1 on the way in,
// so they convert to numbers exactly.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

export const PG_POOL = Symbol('PG_POOL');

export function createPool(connectionString: string, max: number, applicationName: string): Pool {
  const pool = new Pool({ connectionString, max, application_name: applicationName, connectionTimeoutMillis: 5000 });
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
