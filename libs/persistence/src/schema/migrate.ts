import { Pool } from 'pg';
import { createPool, databaseBoundsFrom, longStatementBounds } from '../database/pool';
import { Migration, migrations } from './migrations';

const LOCK_KEY = 7_355_608; // any constant shared by every process that migrates

/** The schema version this code needs: the last migration's id. */
export const SCHEMA_VERSION = migrations[migrations.length - 1].id;

/**
 * Applies pending migrations; safe to run from several processes at once (an advisory lock serialises them).
 * The worker (and its `setup` entry, the Kubernetes Job) is the one owner that calls this; the gateway only
 * checks (schemaVersion). First it checks that every migration already applied is the file it was (its checksum):
 * one edited after it shipped would leave databases that applied the old text and those that apply the new one
 * different, silently. Returns the ids it applied.
 */
export async function runMigrations(
  pool: Pool,
  log: (msg: string) => void = () => {},
  all: Migration[] = migrations,
): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), checksum text)',
    );
    // Databases made before checksums were recorded: the column once, and the files as they are now (which
    // were the same text, in TypeScript, when they were applied).
    const { rowCount } = await client.query(
      "SELECT 1 FROM pg_attribute WHERE attrelid = 'schema_migrations'::regclass AND attname = 'checksum' AND NOT attisdropped",
    );
    if (rowCount === 0) await client.query('ALTER TABLE schema_migrations ADD COLUMN checksum text');
    const { rows } = await client.query<{ id: number; checksum: string | null }>(
      'SELECT id, checksum FROM schema_migrations',
    );
    const byId = new Map(all.map((m) => [m.id, m]));
    for (const r of rows) {
      const m = byId.get(r.id);
      if (!m) continue; // applied by newer code (a rolling upgrade): not this code's to judge
      if (r.checksum === null)
        await client.query('UPDATE schema_migrations SET checksum = $2 WHERE id = $1', [m.id, m.checksum]);
      else if (r.checksum !== m.checksum)
        throw new Error(
          `migration ${m.id} (${m.file}) is not the file this database applied (checksum ${r.checksum.slice(0, 12)}…, ` +
            `the file's ${m.checksum.slice(0, 12)}…): a shipped migration was edited. Restore it, and put the change ` +
            'in a new migration',
        );
    }
    const done = new Set(rows.map((r) => r.id));
    const applied: number[] = [];
    for (const m of all.filter((m) => !done.has(m.id))) {
      log(`migration ${m.id}: ${m.name}`);
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (id, name, checksum) VALUES ($1, $2, $3)', [
          m.id,
          m.name,
          m.checksum,
        ]);
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
