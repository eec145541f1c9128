import { Pool } from 'pg';
import { createPool, databaseBoundsFrom, longStatementBounds } from '../database/pool';
import { migrations } from './migrations';

const LOCK_KEY = 7_355_608; // any constant shared by every process that migrates

/** The schema version this code needs: the last migration's id. */
export const SCHEMA_VERSION = migrations[migrations.length - 1].id;

/**
 * Applies pending migrations; safe to run from several processes at once (an advisory lock serialises them).
 * The worker (and its `setup` entry, the Kubernetes Job) is the one owner that calls this; the gateway only
 * checks (schemaVersion). Returns the ids it applied.
 */
export async function runMigrations(pool: Pool, log: (msg: string) => void = () => {}): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ id: number }>('SELECT id FROM schema_migrations');
    const done = new Set(rows.map((r) => r.id));
    const applied: number[] = [];
    for (const m of migrations.filter((m) => !done.has(m.id))) {
      log(`migration ${m.id}: ${m.name}`);
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      applied.push(m.id);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

interface MigrationConfig {
  DATABASE_URL: string;
  DATABASE_MIGRATION_URL?: string;
  DATABASE_MIGRATION_TIMEOUT_MS: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_QUERY_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_KEEPALIVE_MS: number;
}

/**
 * One connection for the set-up (migrations, sealing credentials): as DATABASE_MIGRATION_URL's role when set (the
 * one that owns the schema; the apps' role then needs no DDL right), else DATABASE_URL's, and bounded by
 * DATABASE_MIGRATION_TIMEOUT_MS rather than the general bound: a migration rewriting a big table takes its time,
 * and waiting for another replica's migrations (the advisory lock) counts too.
 */
export function migrationPool(c: MigrationConfig, applicationName: string) {
  const urlVariable = c.DATABASE_MIGRATION_URL ? 'DATABASE_MIGRATION_URL' : 'DATABASE_URL';
  const url = c.DATABASE_MIGRATION_URL ?? c.DATABASE_URL;
  const bounds = longStatementBounds(
    databaseBoundsFrom(c),
    c.DATABASE_MIGRATION_TIMEOUT_MS,
    'DATABASE_MIGRATION_TIMEOUT_MS',
  );
  return { pool: createPool({ url, urlVariable, max: 1, applicationName, ...bounds }), url, urlVariable };
}

/** The version the database is at: 0 before the first migration. */
export async function schemaVersion(pool: Pool): Promise<number> {
  // Two statements: a query naming a table that does not exist fails when it is planned, even in an untaken branch.
  const { rows } = await pool.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (rows[0].t === null) return 0;
  const { rows: max } = await pool.query<{ v: number | null }>('SELECT max(id) AS v FROM schema_migrations');
  return max[0].v ?? 0;
}
