import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REGENERATE_SQL, renderSqlFile, RENDERED } from '../../libs/persistence/src/sql/statements';

// The SQL readable whole: libs/persistence/sql/<area>.sql holds every statement the repositories send, exactly
// as sent (libs/persistence/src/sql/statements.spec.ts proves the texts are the ones sent).
const DIR = path.resolve(__dirname, '../../libs/persistence/sql');

describe('the rendered SQL files', () => {
  it.each(Object.keys(RENDERED))(`%s.sql is up to date (else run \`${REGENERATE_SQL}\`)`, (area) => {
    expect(readFileSync(path.join(DIR, `${area}.sql`), 'utf8') === renderSqlFile(area)).toBe(true);
  });

  it(`are all generated (else run \`${REGENERATE_SQL}\`)`, () => {
    expect(readdirSync(DIR).sort()).toEqual(
      Object.keys(RENDERED)
        .map((a) => `${a}.sql`)
        .sort(),
    );
  });
});
