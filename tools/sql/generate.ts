// `npm run generate:sql`: rewrites libs/persistence/sql/<area>.sql, every statement the repositories send,
// exactly as sent (see libs/persistence/src/sql/statements.ts), and removes a file of an area no longer there.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderSqlFile, RENDERED } from '../../libs/persistence/src/sql/statements';

const DIR = path.resolve(__dirname, '../../libs/persistence/sql');
mkdirSync(DIR, { recursive: true });
for (const f of readdirSync(DIR)) if (!(f.replace(/\.sql$/, '') in RENDERED)) rmSync(path.join(DIR, f));
for (const area of Object.keys(RENDERED)) {
  writeFileSync(path.join(DIR, `${area}.sql`), renderSqlFile(area));
  console.log(`wrote libs/persistence/sql/${area}.sql`);
}
