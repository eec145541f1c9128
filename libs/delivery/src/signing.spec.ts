import { Webhook } from 'standardwebhooks';
import nacl from 'tweetnacl';
import { generateKeyPair, generateSecret, isValidSecret, publicKeyOf, signDelivery } from './signing';

/** Standard Webhooks' asymmetric check, done with tweetnacl: an Ed25519 implementation independent of ours. */
function verifyV1a(publicKey: string, headers: Record<string, string>, body: string): boolean {
  const content = Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`);
  const key = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  return headers['webhook-signature']
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => nacl.sign.detached.verify(content, Buffer.from(s.slice(4), 'base64'), key));
}

describe(signDelivery.name, () => {
  const body = JSON.stringify({ id: 1, name: 'Ficus' });

  it('produces headers that the standardwebhooks verifier accepts', () => {
    const secret = generateSecret();
    const headers = signDelivery([secret], 'evt_1', body, new Date());
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual({ id: 1, name: 'Ficus' });
  });

  it('sends one signature per secret during a rotation, each verifiable alone', () => {
    const [oldSecret, newSecret] = [generateSecret(), generateSecret()];
    const headers = signDelivery([newSecret, oldSecret], 'evt_2', body, new Date());
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const s of [oldSecret, newSecret]) expect(() => new Webhook(s).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, { ...headers })).toThrow();
  });

  it('generates valid secrets and refuses malformed ones', () => {
    expect(isValidSecret(generateSecret())).toBe(true);
    expect(isValidSecret('whsec_short')).toBe(false);
    expect(isValidSecret('sk_' + 'a'.repeat(40))).toBe(false);
  });

  it('signs v1a with Ed25519 for a whsk_ key, verifiable with the whpk_ public key alone', () => {
    const pair = generateKeyPair();
    expect(pair.secretKey).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(pair.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyOf(pair.secretKey)).toBe(pair.publicKey);
    const headers = signDelivery([pair.secretKey], 'evt_3', body, new Date());
    expect(headers['webhook-signature']).toMatch(/^v1a,/);
    expect(verifyV1a(pair.publicKey, { ...headers }, body)).toBe(true);
    expect(verifyV1a(pair.publicKey, { ...headers }, body.replace('Ficus', 'Fic us'))).toBe(false);
    expect(verifyV1a(generateKeyPair().publicKey, { ...headers }, body)).toBe(false);
  });

  it('signs with the new and the rotated-out key pair during a rotation', () => {
    const [before, after] = [generateKeyPair(), generateKeyPair()];
    const headers = signDelivery([after.secretKey, before.secretKey], 'evt_4', body, new Date());
    for (const pair of [before, after]) expect(verifyV1a(pair.publicKey, { ...headers }, body)).toBe(true);
  });
});
