import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allEnvKeys } from '@app/config';

// The README's configuration table is the operator's reference: it must name every variable the apps read.
describe('README', () => {
  const readme = readFileSync(path.resolve(__dirname, '../README.md'), 'utf8');

  it.each(allEnvKeys())('documents %s in the configuration table', (key) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${key}\` \\|`, 'm'));
  });

  it('starts with the two commands', () => {
    const first = readme.indexOf('npm start');
    expect(first).toBeGreaterThan(0);
    expect(readme.indexOf('npm test')).toBeGreaterThan(first);
    expect(first).toBeLessThan(readme.indexOf('## Configuration'));
  });
});
