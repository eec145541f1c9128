import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { allEnvKeys } from '@app/config';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

// The README is the front door: short, the two commands first, a map of docs/. The reference lives in docs/.
describe('README', () => {
  const readme = read('README.md');

  it('stays short (at most 12 KB)', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024);
  });

  it('starts with the two commands, before the map of the docs', () => {
    const first = readme.indexOf('npm start');
    expect(first).toBeGreaterThan(0);
    expect(readme.indexOf('npm test')).toBeGreaterThan(first);
    expect(first).toBeLessThan(readme.indexOf('## Documentation'));
  });

  it('links every page of docs/', () => {
    const pages = readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    for (const page of pages) expect(readme).toContain(`(docs/${page})`);
  });
});

// The configuration page is the operator's reference: it must name every variable the apps read.
describe('docs/configuration.md', () => {
  const config = read('docs/configuration.md');

  it.each(allEnvKeys())('documents %s in the configuration table', (key) => {
    expect(config).toMatch(new RegExp(`^\\| \`${key}\` \\|`, 'm'));
  });
});

// A link that leads nowhere is a dead end for a newcomer: every relative link in the docs resolves.
describe('links in the docs', () => {
  const files = ['README.md', 'CONTRIBUTING.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)];
  it.each(files.filter((f) => f.endsWith('.md')))('%s links only to files that exist', (file) => {
    const targets = [...read(file).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]);
    const missing = targets
      .filter((t) => !/^[a-z]+:/.test(t))
      .filter((t) => !existsSync(path.resolve(path.dirname(path.join(ROOT, file)), t)));
    expect(missing).toEqual([]);
  });
});
