import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { generateSecret } from '../signing';
import { HIDDEN_TOKEN, sentHeaders, WebhookClient } from './webhook-client';

describe('WebhookClient', () => {
  let server: http.Server;
  let url = '';
  let connections = 0;
  const seen: http.IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on('end', () => {
        if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(), 500);
        else if (req.url === '/big') res.writeHead(200).end('x'.repeat(100_000));
        else if (req.url === '/redirect') res.writeHead(302, { location: '/hook' }).end();
        else if (req.url?.startsWith('/echo'))
          // The echo ends 10 characters past the first KiB: the token in it is cut off inside.
          res.writeHead(400).end(`url=${req.url} authorization=${req.headers.authorization}`.padStart(1034, ' '));
        else res.writeHead(202).end('thanks');
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const secret = generateSecret();
  const request = () => ({
    url,
    messageId: 'msg_1',
    body: '{"id":1,"name":"Fern"}',
    secrets: [secret],
    token: 'tok-1',
    hops: 0,
    originEventId: 'msg_1',
  });

  it('refuses a private address unless allowed, before anything is signed or sent', async () => {
    const client = new WebhookClient(false, 2000);
    const r = await client.send(request());
    await client.close();
    expect(r).toMatchObject({
      status: null,
      signature: null,
      error: expect.stringMatching(/^refused by the SSRF guard/),
    });
    expect(seen).toHaveLength(0);
  });

  it('sends signed, with the token, and the headers rebuilt for an operator match but for the token', async () => {
    const client = new WebhookClient(true, 2000);
    const r = await client.send(request());
    await client.close();
    expect(r).toMatchObject({ status: 202, responseBody: 'thanks', error: null });
    const [got] = seen;
    expect(got.authorization).toBe('Bearer tok-1');
    expect(new Webhook(secret).verify(request().body, got as Record<string, string>)).toEqual({ id: 1, name: 'Fern' });
    const shown = sentHeaders('msg_1', r, { hops: 0, originEventId: 'msg_1' }, true)!;
    expect(shown.authorization).toBe(HIDDEN_TOKEN);
    for (const [k, v] of Object.entries(shown)) if (k !== 'authorization') expect({ [k]: v }).toEqual({ [k]: got[k] });
    expect(
      sentHeaders('msg_1', { attemptedAt: r.attemptedAt, signature: null }, { hops: 0, originEventId: 'x' }, true),
    ).toBeNull();
  });

  it('refuses a name that resolves to a private address, at connect time', async () => {
    const client = new WebhookClient(false, 2000);
    const port = new URL(url).port;
    const r = await client.send({ ...request(), url: `http://localhost:${port}/hook` });
    await client.close();
    expect(r.error).toMatch(/^refused by the SSRF guard: localhost resolves to (127\.0\.0\.1|::1)/);
    expect(r.status).toBeNull();
  });

  it('gives up at the timeout, says so, and reports a refused connection by its code', async () => {
    const client = new WebhookClient(true, 200);
    const slow = await client.send({ ...request(), url: url.replace('/hook', '/slow') });
    expect(slow).toMatchObject({ status: null, error: 'timed out after 200 ms' });
    expect(slow.latencyMs).toBeLessThan(450);
    const closed = await client.send({ ...request(), url: 'http://127.0.0.1:1/hook' });
    expect(closed).toMatchObject({ status: null, error: 'ECONNREFUSED' });
    await client.close();
  });

  it('keeps the first KiB of an answer, reads the rest away and reuses the connection', async () => {
    const client = new WebhookClient(true, 2000);
    const before = connections;
    const big = await client.send({ ...request(), url: url.replace('/hook', '/big') });
    expect(big.responseBody).toHaveLength(1024);
    for (let i = 0; i < 10; i++) await client.send(request());
    await client.close();
    expect(connections - before).toBeLessThanOrEqual(2); // not one per request
  });

  it('never follows a redirect: a 3xx is the answer, and its target is not asked', async () => {
    const client = new WebhookClient(true, 2000);
    const before = seen.length;
    const r = await client.send({ ...request(), url: url.replace('/hook', '/redirect') });
    await client.close();
    expect(r).toMatchObject({ status: 302, error: null });
    expect(seen.length - before).toBe(1);
  });

  it("records an echoing receiver's answer with the subscriber's credentials taken out, even cut off", async () => {
    const token = 'sub-token-0123456789abcdef';
    const client = new WebhookClient(true, 2000);
    const r = await client.send({ ...request(), token, url: url.replace('/hook', '/echo?api_key=query-secret-42') });
    await client.close();
    expect(r.status).toBe(400);
    // The first KiB was kept: the token's echo cut 10 characters short, and its start taken out all the same.
    expect(r.responseBody).not.toContain('sub-tok');
    expect(r.responseBody).not.toContain('query-secret');
    expect(r.responseBody).toMatch(/url=\/echo\?api_key=\[redacted\] authorization=\[redacted\]$/);
  });
});
