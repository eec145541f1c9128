import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A schema migration: one file in ./migrations named `NNN-what-it-does.sql` (numbered from 001 without gaps),
 * whose first line, `-- <what it does>`, is the name schema_migrations records. Applied in order, each once (see
 * migrate.ts). Append; never edit a shipped migration: its checksum is recorded when it is applied and checked at
 * every start, and a file that no longer matches stops the set-up.
 */
export interface Migration {
  id: number;
  name: string;
  file: string;
  sql: string;
  /** SHA-256 of the file, line endings as \n (a checkout that turns them into \r\n changes nothing). */
  checksum: string;
}

/** Beside this module in the source tree, and copied beside it in dist/ by the build (nest-cli.json's assets). */
export const MIGRATIONS_DIR = join(__dirname, 'migrations');

const FILE = /^(\d{3})-[a-z0-9]+(?:-[a-z0-9]+)*\.sql$/;

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const list = files.map((file, i) => {
    const number = FILE.exec(file)?.[1];
    if (number === undefined) throw new Error(`${dir}/${file}: a migration is named NNN-what-it-does.sql`);
    if (Number(number) !== i + 1)
      throw new Error(`${dir}/${file}: migrations are numbered from 001 without gaps; this one should be ${i + 1}`);
    const sql = readFileSync(join(dir, file), 'utf8').replace(/\r\n/g, '\n');
    const first = sql.slice(0, sql.indexOf('\n'));
    if (!first.startsWith('-- ') || first.length < 4)
      throw new Error(`${dir}/${file}: its first line says what it does, as "-- <what it does>"`);
    const checksum = createHash('sha256').update(sql).digest('hex');
    return { id: i + 1, name: first.slice(3).trim(), file, sql, checksum };
  });
  if (list.length === 0) throw new Error(`no migration in ${dir}: the build must copy them beside migrations.js`);
  return list;
}

export const migrations: Migration[] = loadMigrations();
