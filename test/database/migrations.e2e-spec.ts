import { Pool } from 'pg';
import { migrations, runMigrations, schemaVersion } from '@app/persistence';
import { SUBSCRIPTION_SEND_FIELDS } from '@app/persistence/sql/send-row';
import * as e2e from '../../tools/harness/stack';

// Migrations are files (libs/persistence/src/schema/migrations): a database made from scratch and one upgraded
// from an earlier schema must end the same, and a shipped migration edited afterwards must stop the set-up.

/** The schema as PostgreSQL holds it: columns, constraints, indexes, functions, triggers and views. */
async function schemaOf(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(`
    SELECT format('column %s.%s %s %s %s', table_name, column_name, data_type, is_nullable, column_default) AS line
      FROM information_schema.columns WHERE table_schema = 'public'
    UNION ALL SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid))
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT format('index %s', indexdef) FROM pg_indexes WHERE schemaname = 'public'
    UNION ALL SELECT format('function %s(%s) %s', proname, pg_get_function_arguments(oid), prosrc)
      FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL SELECT format('trigger %s', pg_get_triggerdef(oid)) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT format('view %s %s', viewname, definition) FROM pg_views WHERE schemaname = 'public'
    ORDER BY 1`);
  return rows.map((r) => r.line).filter((line) => !line.includes('schema_migrations'));
}

describe('schema migrations', () => {
  const dbs: e2e.ScratchDatabase[] = [];
  const scratch = async (name: string) => {
    const db = await e2e.scratchDatabase(name, 1);
    dbs.push(db);
    return db.pool;
  };

  beforeAll(() => e2e.prepareTestInfrastructure());
  afterAll(() => Promise.all(dbs.map((db) => db.drop())));

  it('ends the same from scratch as upgraded from each earlier schema', async () => {
    const fresh = await scratch('migrate_fresh');
    await runMigrations(fresh);
    expect(await schemaVersion(fresh)).toBe(migrations.length);
    const expected = await schemaOf(fresh);
    expect(expected.length).toBeGreaterThan(100);
    // The first schema, one from the middle, and the one before the newest migration (the last release's).
    for (const from of [1, Math.floor(migrations.length / 2), migrations.length - 1]) {
      const upgraded = await scratch(`migrate_from_${from}`);
      expect(await runMigrations(upgraded, undefined, migrations.slice(0, from))).toHaveLength(from);
      expect(await runMigrations(upgraded)).toEqual(migrations.slice(from).map((m) => m.id));
      expect(await schemaOf(upgraded)).toEqual(expected);
    }
  });

  it('records each checksum, fills those of a database migrated before they were kept, and refuses an edit', async () => {
    const pool = await scratch('migrate_checksums');
    await runMigrations(pool);
    const recorded = await pool.query<{ id: number; checksum: string }>(
      'SELECT id, checksum FROM schema_migrations ORDER BY id',
    );
    expect(recorded.rows).toEqual(migrations.map((m) => ({ id: m.id, checksum: m.checksum })));

    // Made by the code before checksums were recorded: no column. The next start adds and fills it.
    await pool.query('ALTER TABLE schema_migrations DROP COLUMN checksum');
    expect(await runMigrations(pool)).toEqual([]);
    const filled = await pool.query('SELECT count(*)::int AS n FROM schema_migrations WHERE checksum IS NOT NULL');
    expect(filled.rows[0].n).toBe(migrations.length);

    const edited = migrations.map((m) => (m.id === 3 ? { ...m, checksum: 'f'.repeat(64) } : m));
    await expect(runMigrations(pool, undefined, edited)).rejects.toThrow(
      new RegExp(`migration 3 \\(${migrations[2].file}\\) is not the file this database applied.*new migration`),
    );
  });

  it("bumps the subscriptions' version on a change of any column a delivery is sent with", async () => {
    // Each worker sends from its copy of the subscribers, reloaded when the version moves: a send column the
    // trigger does not watch would keep a changed setting (a new URL, a broker's credentials) out of fan-outs.
    const pool = await scratch('migrate_trigger');
    await runMigrations(pool);
    const { rows } = await pool.query<{ def: string }>(
      `SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgname = 'subscriptions_changed'`,
    );
    expect(rows).toHaveLength(1);
    for (const column of [...SUBSCRIPTION_SEND_FIELDS, 'previous_secret', 'enabled', 'deleted_at', 'filter', 'kind'])
      expect(rows[0].def).toContain(`old.${column}`);
  });

  it('send a delivery with the columns every way out reads (subscription_send_settings)', async () => {
    // The claim, the fan-out, a test send and each worker's copy of its subscribers read this one view, and the
    // TypeScript that opens a row reads SUBSCRIPTION_SEND_FIELDS: the two must name the same columns.
    const pool = await scratch('migrate_send_view');
    await runMigrations(pool);
    const { rows } = await pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'subscription_send_settings'`,
    );
    expect(rows.map((r) => r.column_name).sort()).toEqual(
      [...SUBSCRIPTION_SEND_FIELDS, 'previous_secret', 'subscription_id'].sort(),
    );
  });
});
