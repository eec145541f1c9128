import { redactUrl } from './describe';

describe(redactUrl.name, () => {
  it('hides the password and a key passphrase (sslpassword), keeping what helps to debug', () => {
    const shown = redactUrl(
      'postgresql://app:s3cret@db:5432/p?sslmode=verify-full&sslrootcert=/ca.crt&sslpassword=k3y',
    );
    expect(shown).not.toMatch(/s3cret|k3y/);
    expect(shown).toContain('app:***@db:5432/p');
    expect(shown).toContain('sslrootcert=%2Fca.crt');
  });
});
