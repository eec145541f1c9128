import { readFileSync } from 'node:fs';
import { allEnvKeys } from '@app/config';
import { ENV_EXAMPLE, REGENERATE, renderEnvExample } from '../../tools/env-example';

// .env.example is generated from the environment schema (and the meanings in docs/configuration.md): compose reads the copy an
// operator makes of it, so a variable missing or a default changed there would mislead them.
describe('.env.example', () => {
  const shipped = readFileSync(ENV_EXAMPLE, 'utf8');

  it(`is what \`${REGENERATE}\` writes from the schema today`, () => {
    const stale = shipped !== renderEnvExample();
    if (stale) throw new Error(`.env.example is stale: run \`${REGENERATE}\` and commit the result`);
  });

  it.each(allEnvKeys())('lists %s', (key) => {
    expect(shipped).toMatch(new RegExp(`^(# )?${key}=`, 'm'));
  });

  it('sets no credential: the ones compose needs are left empty for the operator', () => {
    const set = shipped
      .split('\n')
      .filter((l) => /^(WEBHOOK_TOKENS|ADMIN_TOKENS|SECRETS_KEY|SECRETS_PREVIOUS_KEYS)=/.test(l));
    expect(set.sort()).toEqual(['ADMIN_TOKENS=', 'SECRETS_KEY=', 'WEBHOOK_TOKENS=']);
  });
});
