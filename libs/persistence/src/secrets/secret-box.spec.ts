import { randomBytes } from 'node:crypto';
import { keyId, SecretBox, SecretsKeyError } from './secret-box';

describe(SecretBox.name, () => {
  const [a, b] = [randomBytes(32), randomBytes(32)];
  const secret = 'whsec_' + randomBytes(32).toString('base64');

  it('seals so that nothing of the value shows, and opens it again', () => {
    const sealed = new SecretBox(a).seal(secret, 'subscription:1');
    expect(sealed).toMatch(new RegExp(`^sealed:v1:${keyId(a)}:`));
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(new SecretBox(a).open(sealed, 'subscription:1')).toBe(secret);
    expect(new SecretBox(a).seal(secret, 'subscription:1')).not.toBe(sealed); // a fresh nonce each time
  });

  it('fails loudly, naming the key, rather than returning garbage', () => {
    const sealed = new SecretBox(a).seal(secret, 'subscription:1');
    expect(() => new SecretBox(b).open(sealed, 'subscription:1')).toThrow(
      new RegExp(`sealed with key ${keyId(a)}, which is neither SECRETS_KEY \\(key ${keyId(b)}\\)`),
    );
    expect(() => new SecretBox(a).open(sealed, 'subscription:2')).toThrow(SecretsKeyError); // moved to another row
    const tampered = sealed.slice(0, -3) + (sealed.endsWith('A') ? 'BBB' : 'AAA');
    expect(() => new SecretBox(a).open(tampered, 'subscription:1')).toThrow(/altered or moved/);
  });

  it('answers a value it opened before from memory, and still refuses an altered one', () => {
    const box = new SecretBox(a);
    const sealed = box.seal(secret, 'subscription:1');
    expect(box.open(sealed, 'subscription:1')).toBe(secret);
    expect(box.open(sealed, 'subscription:1')).toBe(secret);
    expect(() => box.open(sealed, 'subscription:2')).toThrow(SecretsKeyError);
    expect(() => box.open(sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'BB' : 'AA'), 'subscription:1')).toThrow(
      SecretsKeyError,
    );
  });

  it('opens values of a previous key during a rotation, and seals only with the current one', () => {
    const old = new SecretBox(a).seal(secret, 'subscription:1');
    const rotating = new SecretBox(b, [a]);
    expect(rotating.open(old, 'subscription:1')).toBe(secret);
    expect(SecretBox.keyIdOf(rotating.seal(secret, 'subscription:1'))).toBe(keyId(b));
  });
});
