import { Webhook } from 'standardwebhooks';
import { generateSecret, isValidSecret, signDelivery } from './signing';

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
});
