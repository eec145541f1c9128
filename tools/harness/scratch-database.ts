import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';

export interface ScratchDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/**
 * An empty database of the caller's own on the PostgreSQL server `serverUrl` names: for statements that must not
 * see other suites' rows (a claim sees every pending delivery), a schema that must start unmigrated, or a script's
 * hostile data on a server others use (the fuzzer). `drop()` ends it.
 */
export async function databaseOfItsOwn(serverUrl: string, prefix: string, poolSize = 4): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Pool({ connectionString: serverUrl, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  const pool = new Pool({ connectionString: u.toString(), max: poolSize });
  pool.on('error', () => undefined); // the drop ends its connections; nothing waits on them then
  return {
    url: u.toString(),
    pool,
    async drop() {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
