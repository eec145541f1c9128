import { OAuthClient, OAuthTokens } from './oauth-tokens';
import type { PostResult, WebhookTransport } from './transport';

// The cache's clock and answers, without a server (receiver-auth.spec.ts has the real exchange): a token endpoint
// that issues tok-1, tok-2, … with what `answer` says.
describe('OAuthTokens', () => {
  let now = 1_000_000;
  let answer: (n: number) => { status: number; body: object } = (n) => ({
    status: 200,
    body: { access_token: `tok-${n}`, token_type: 'Bearer', expires_in: 3600 },
  });
  let fetched = 0;
  const transport: WebhookTransport = {
    post: async (): Promise<PostResult> => {
      const a = answer(++fetched);
      return { status: a.status, headers: {}, body: JSON.stringify(a.body) };
    },
    close: async () => undefined,
  };
  const client: OAuthClient = { tokenUrl: 'https://auth.example/token', clientId: 'c', clientSecret: 's3cret-value' };
  const tokens = () => new OAuthTokens(transport, false, 'test', () => now);

  it('keeps a token until 30 s before it expires; a new secret or scope is another token', async () => {
    const t = tokens();
    expect(await t.token(client, 1000)).toBe('tok-1');
    now += (3600 - 30) * 1000 - 1;
    expect(await t.token(client, 1000)).toBe('tok-1');
    now += 2;
    expect(await t.token(client, 1000)).toBe('tok-2');
    expect(await t.token({ ...client, clientSecret: 'another-secret' }, 1000)).toBe('tok-3');
    expect(await t.token({ ...client, scope: 'x' }, 1000)).toBe('tok-4');
    expect(await t.token(client, 1000)).toBe('tok-2');
  });

  it('keeps one 60 s when the answer has no expiry, and none whose lifetime is within the margin', async () => {
    const t = tokens();
    answer = (n) => ({ status: 200, body: { access_token: `tok-${n}` } });
    const first = await t.token(client, 1000);
    now += 59_000;
    expect(await t.token(client, 1000)).toBe(first);
    now += 2_000;
    expect(await t.token(client, 1000)).not.toBe(first);
    answer = (n) => ({ status: 200, body: { access_token: `tok-${n}`, expires_in: 30 } });
    const c = { ...client, scope: 'short' };
    expect(await t.token(c, 1000)).not.toBe(await t.token(c, 1000));
  });

  it('forgets a refused token only if it is still the one kept', async () => {
    const t = tokens();
    answer = (n) => ({ status: 200, body: { access_token: `tok-${n}`, expires_in: 3600 } });
    const c = { ...client, scope: 'forget' };
    const old = await t.token(c, 1000);
    t.forget(c, old);
    const fresh = await t.token(c, 1000);
    t.forget(c, old); // a second request refused with the old token: the fresh one stays
    expect(await t.token(c, 1000)).toBe(fresh);
  });

  it('says why there is no token, with a standard error code only', async () => {
    const t = tokens();
    const c = { ...client, scope: 'errors' };
    const cases: [{ status: number; body: object }, string][] = [
      [{ status: 400, body: { error: 'invalid_scope' } }, 'oauth2: the token endpoint answered 400 (invalid_scope)'],
      [{ status: 401, body: { error: 's3cret-value was wrong' } }, 'oauth2: the token endpoint answered 401'],
      [{ status: 200, body: { access_token: 'a b' } }, 'oauth2: the access_token has characters a header cannot carry'],
      [
        { status: 200, body: { access_token: 'x', token_type: 'mac' } },
        'oauth2: the token endpoint issued a token that is not a Bearer token',
      ],
    ];
    for (const [a, why] of cases) {
      answer = () => a;
      await expect(t.token(c, 1000)).rejects.toThrow(why);
    }
    await expect(t.token({ ...c, tokenUrl: 'ftp://auth.example/' }, 1000)).rejects.toThrow(
      'refused by the SSRF guard: the oauth2 token endpoint: only http and https URLs are allowed',
    );
  });
});
