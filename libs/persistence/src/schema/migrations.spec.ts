import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMigrations, migrations } from './migrations';

const dirWith = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
};

describe('migrations as files', () => {
  it('reads every shipped migration in order, named by its first line', () => {
    expect(migrations.map((m) => m.id)).toEqual(migrations.map((_, i) => i + 1));
    expect(migrations[0]).toMatchObject({ id: 1, name: 'plants and processed events' });
    for (const m of migrations) {
      expect(m.file).toMatch(new RegExp(`^${String(m.id).padStart(3, '0')}-[a-z0-9-]+\\.sql$`));
      expect(m.checksum).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('takes the name from the first line and checksums the text with \\n line endings', () => {
    const lf = loadMigrations(dirWith({ '001-first.sql': '-- the first\nSELECT 1;\n' }));
    const crlf = loadMigrations(dirWith({ '001-first.sql': '-- the first\r\nSELECT 1;\r\n' }));
    expect(lf).toEqual([expect.objectContaining({ id: 1, name: 'the first', sql: '-- the first\nSELECT 1;\n' })]);
    expect(crlf[0].checksum).toBe(lf[0].checksum);
    const edited = loadMigrations(dirWith({ '001-first.sql': '-- the first\nSELECT 2;\n' }));
    expect(edited[0].checksum).not.toBe(lf[0].checksum);
  });

  it('refuses a gap, a badly named file and a file that does not say what it does', () => {
    expect(() => loadMigrations(dirWith({ '001-a.sql': '-- a\n', '003-c.sql': '-- c\n' }))).toThrow(
      /003-c\.sql: migrations are numbered from 001 without gaps; this one should be 2/,
    );
    expect(() => loadMigrations(dirWith({ '1-a.sql': '-- a\n' }))).toThrow(/a migration is named NNN-what-it-does/);
    expect(() => loadMigrations(dirWith({ '001-a.sql': 'SELECT 1;\n' }))).toThrow(/its first line says what it does/);
    expect(() => loadMigrations(dirWith({}))).toThrow(/no migration in/);
  });
});
