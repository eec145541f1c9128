import http from 'node:http';
import { AddressInfo } from 'node:net';
import { clientCredentialsProvider } from './oauth-bearer';

describe(clientCredentialsProvider.name, () => {
  let server: http.Server;
  let url = '';
  const requests: { authorization?: string; body: string }[] = [];
  let answer: (n: number) => { status: number; body: object } = (n) => ({
    status: 200,
    body: { access_token: `token-${n}`, token_type: 'Bearer', expires_in: 100 },
  });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        requests.push({ authorization: req.headers.authorization, body });
        const a = answer(requests.length);
        res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  afterAll(() => server.close());
  beforeEach(() => (requests.length = 0));

  const cc = () => ({ tokenUrl: url, clientId: 'plant store', clientSecret: 's3cret', scope: 'kafka' });

  it('asks once for concurrent connections, with the client credentials by HTTP Basic and the scope', async () => {
    const provider = clientCredentialsProvider(cc());
    const tokens = await Promise.all([provider(), provider(), provider()]);
    expect(tokens.map((t) => t.value)).toEqual(['token-1', 'token-1', 'token-1']);
    expect(requests).toHaveLength(1);
    expect(requests[0].authorization).toBe(`Basic ${Buffer.from('plant%20store:s3cret').toString('base64')}`);
    expect(new URLSearchParams(requests[0].body).get('grant_type')).toBe('client_credentials');
    expect(new URLSearchParams(requests[0].body).get('scope')).toBe('kafka');
  });

  it('keeps the token until 80 % of its lifetime has passed, then refreshes it before it expires', async () => {
    let now = 1_000_000;
    const provider = clientCredentialsProvider(cc(), () => now);
    expect((await provider()).value).toBe('token-1');
    now += 79_000; // expires_in 100 s
    expect((await provider()).value).toBe('token-1');
    now += 2_000;
    expect((await provider()).value).toBe('token-2');
    expect(requests).toHaveLength(2);
  });

  it('says which setting a refusal is about, without the secret', async () => {
    answer = () => ({ status: 401, body: { error: 'invalid_client', error_description: 'bad secret s3cret' } });
    const failure = clientCredentialsProvider(cc())();
    await expect(failure).rejects.toThrow(
      /KAFKA_SASL_OAUTHBEARER_TOKEN_URL=.* refused the client credentials \(HTTP 401 invalid_client\): check KAFKA_SASL_OAUTHBEARER_CLIENT_ID/,
    );
    await expect(failure).rejects.not.toThrow(/s3cret/);
  });
});
