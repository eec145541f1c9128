import http from 'node:http';
import { AddressInfo } from 'node:net';
import type { DeliveryDestination } from '../destinations/destination';
import { credentialsOf, redactCredentials } from '../redaction';
import { generateSecret } from '../signing';
import { HIDDEN_BASIC, HIDDEN_OAUTH2, sentHeaders, WebhookClient } from './webhook-client';

// Basic and OAuth 2 against a real receiver and token endpoint on this machine (private networks allowed, but
// for the SSRF case): what arrives, how often a token is fetched, and what an attempt records.
describe('authenticated HTTP receivers', () => {
  let server: http.Server;
  let base = '';
  /** What the token endpoint answers next (`null`: a new token each time, with `expiresIn`). */
  let tokenAnswer: { status: number; body: object } | null = null;
  let expiresIn: number | undefined = 3600;
  let tokenDelayMs = 0;
  let issued = 0;
  /** The tokens the receiver takes: all issued ones, or only the latest (an earlier one revoked). */
  let onlyLatest = false;
  let alwaysRefuse = false;
  const tokenRequests: { authorization?: string; contentType?: string; body: string }[] = [];
  const hooks: (string | undefined)[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/token') {
          tokenRequests.push({
            authorization: req.headers.authorization,
            contentType: req.headers['content-type'],
            body,
          });
          const answer = tokenAnswer ?? {
            status: 200,
            body: { access_token: `tok-${++issued}`, token_type: 'Bearer', expires_in: expiresIn },
          };
          setTimeout(
            () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body)),
            tokenDelayMs,
          );
          return;
        }
        const auth = req.headers.authorization;
        hooks.push(auth);
        const valid =
          auth?.startsWith('Basic ') ||
          (!alwaysRefuse && (onlyLatest ? auth === `Bearer tok-${issued}` : /^Bearer tok-\d+$/.test(auth ?? '')));
        if (!valid) return void res.writeHead(401).end();
        // An echoing receiver: what it got, as many test endpoints answer.
        res.writeHead(202).end(`you sent authorization=${auth}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    tokenAnswer = null;
    expiresIn = 3600;
    tokenDelayMs = 0;
    onlyLatest = false;
    alwaysRefuse = false;
    tokenRequests.length = 0;
    hooks.length = 0;
  });

  const secret = generateSecret();
  const oauth = (over: Partial<{ tokenUrl: string; scope: string }> = {}): DeliveryDestination => ({
    settings: {
      oauth2: {
        tokenUrl: `${base}/token`,
        clientId: 'plant store',
        scope: 'plants:write',
        audience: 'https://api',
        ...over,
      },
    },
    secrets: { clientSecret: 'client-s3cret-value' },
  });
  const request = (destination: DeliveryDestination, url = `${base}/hook`) => ({
    url,
    messageId: 'msg_1',
    body: '{"id":1}',
    secrets: [secret],
    token: null,
    hops: 0,
    originEventId: 'msg_1',
    destination,
  });

  it("sends the URL's user and password as Basic, hides them from operators and from an echo", async () => {
    const client = new WebhookClient(true, 2000);
    const destination = { settings: {}, secrets: { username: 'ann', password: 'p@ss-w0rd' } };
    // A custom Authorization saved beside it gives way: one Authorization.
    const r = await client.send({ ...request(destination), secretHeaders: { Authorization: 'Token custom-1234' } });
    await client.close();
    const basic = `Basic ${Buffer.from('ann:p@ss-w0rd').toString('base64')}`;
    expect(hooks).toEqual([basic]);
    expect(r).toMatchObject({ status: 202, error: null, responseBody: 'you sent authorization=Basic [redacted]' });
    const shown = sentHeaders('msg_1', r, { hops: 0, originEventId: 'msg_1' }, false, undefined, destination);
    expect(shown!.authorization).toBe(HIDDEN_BASIC);
  });

  it('fetches one OAuth 2 token for many sends, with the client authenticated by Basic (RFC 6749 §2.3.1)', async () => {
    const client = new WebhookClient(true, 2000);
    tokenDelayMs = 50;
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => client.send(request(oauth()))));
    await client.send(request(oauth()));
    await client.close();
    expect(tokenRequests).toHaveLength(1); // five at once shared one fetch; the sixth had it cached
    const [t] = tokenRequests;
    expect(Buffer.from(t.authorization!.replace(/^Basic /, ''), 'base64').toString()).toBe(
      'plant+store:client-s3cret-value',
    );
    expect(t.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(t.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'plants:write',
      audience: 'https://api',
    });
    expect(new Set(hooks)).toEqual(new Set([`Bearer tok-${issued}`]));
    expect(results.every((r) => r.status === 202 && r.responseBody === 'you sent authorization=[redacted]')).toBe(true);
    const shown = sentHeaders('msg_1', results[0], { hops: 0, originEventId: 'msg_1' }, true, undefined, oauth());
    expect(shown!.authorization).toBe(HIDDEN_OAUTH2);
  });

  it('on a 401 fetches a fresh token and sends once more, within the same attempt; once only', async () => {
    const client = new WebhookClient(true, 2000);
    await client.send(request(oauth()));
    onlyLatest = true;
    issued++; // the receiver now takes only a token newer than the cached one: the cached one is revoked
    const r = await client.send(request(oauth()));
    expect(r).toMatchObject({ status: 202, error: null });
    expect(tokenRequests).toHaveLength(2);
    expect(hooks.slice(1)).toEqual([`Bearer tok-${issued - 2}`, `Bearer tok-${issued}`]);

    alwaysRefuse = true;
    hooks.length = 0;
    const refused = await client.send(request(oauth()));
    await client.close();
    expect(refused).toMatchObject({ status: 401, error: null });
    expect(hooks).toHaveLength(2); // the first try and one more, no loop
  });

  it('records a token endpoint refusal clearly, without the secret, and sends nothing', async () => {
    const client = new WebhookClient(true, 2000);
    tokenAnswer = { status: 401, body: { error: 'invalid_client', error_description: 'client-s3cret-value is wrong' } };
    const r = await client.send(request(oauth({ scope: 'other' })));
    tokenAnswer = { status: 200, body: { token_type: 'Bearer' } };
    const empty = await client.send(request(oauth({ scope: 'other' })));
    const down = await client.send(request(oauth({ tokenUrl: 'http://127.0.0.1:1/token' })));
    await client.close();
    expect(r).toMatchObject({ status: null, error: 'oauth2: the token endpoint answered 401 (invalid_client)' });
    expect(r.signature).not.toBeNull();
    expect(empty.error).toBe('oauth2: the token endpoint answered 200 without an access_token');
    expect(down.error).toBe('oauth2: the token endpoint could not be reached (ECONNREFUSED)');
    tokenAnswer = null;
    // The fetch, the request and a resend share one DELIVERY_TIMEOUT_MS (200 ms): given up near 200 ms, long
    // before the token endpoint's answer. The margin is wide because a loaded machine fires timers late.
    tokenDelayMs = 1000;
    const slow = new WebhookClient(true, 200);
    const late = await slow.send(request(oauth({ scope: 'slow' })));
    await slow.close();
    expect(late).toMatchObject({
      status: null,
      error: 'oauth2: the token endpoint did not answer in time',
    });
    expect(late.latencyMs).toBeLessThan(700);
    expect(hooks).toHaveLength(0);
  });

  it('reaches the token endpoint under the SSRF guard of receivers', async () => {
    const client = new WebhookClient(false, 2000);
    const port = new URL(base).port;
    const literal = await client.send(request(oauth(), 'https://receiver.invalid/hook'));
    const named = await client.send(
      request(oauth({ tokenUrl: `http://localhost:${port}/token` }), 'https://receiver.invalid/hook'),
    );
    await client.close();
    expect(literal.error).toMatch(/^refused by the SSRF guard: the oauth2 token endpoint: 127\.0\.0\.1 is /);
    expect(named.error).toMatch(/^refused by the SSRF guard: the oauth2 token endpoint: localhost resolves to /);
    expect(tokenRequests).toHaveLength(0);
  });

  it('fetches a new token when the one kept has expired', async () => {
    const client = new WebhookClient(true, 2000);
    expiresIn = 30; // within the 30 s margin: expired as soon as it is fetched
    await client.send(request(oauth()));
    await client.send(request(oauth()));
    await client.close();
    expect(tokenRequests).toHaveLength(2);
    expect(hooks).toEqual([`Bearer tok-${issued - 1}`, `Bearer tok-${issued}`]);
  });

  it("takes the destination's credentials and the access tokens sent out of a recorded answer", () => {
    const r = {
      ...request(oauth()),
      destination: {
        settings: {},
        secrets: { username: 'ann', password: 'pw-1234', clientSecret: 'client-s3cret-value' },
      },
    };
    const echo = [
      Buffer.from('ann:pw-1234').toString('base64'),
      'pw-1234',
      'client-s3cret-value',
      'Bearer tok-99',
      Buffer.from('tok-99').toString('base64'),
    ].join(' ');
    expect(redactCredentials(echo, credentialsOf(r, ['tok-99']))).toBe(Array(5).fill('[redacted]').join(' '));
  });
});
