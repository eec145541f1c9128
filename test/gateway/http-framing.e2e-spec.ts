import net from 'node:net';
import zlib from 'node:zlib';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// Issue 25, HTTP framing: whatever a front proxy could read differently from the gateway is refused. A fuzz run
// found two Host headers answered 200, "HTTP/2.0" over a text connection served as 1.1, and a chunk declared
// larger than WEBHOOK_MAX_BYTES waited for until the request timeout. Each case is sent as raw bytes on a socket
// of its own, with a valid token, so only the framing can be what is refused.
describe('HTTP framing', () => {
  let gw: e2e.RunningGateway;
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    // A long request timeout, so an answer that waits for it cannot pass for a prompt refusal.
    gw = await e2e.startGateway(e2e.baseEnv({ HTTP_REQUEST_TIMEOUT_MS: '20000', WEBHOOK_MAX_BYTES: '65536' }));
  });

  afterAll(() => gw?.close());

  interface Answer {
    status: number;
    text: string;
    ms: number;
    closed: boolean;
  }

  /** Writes `raw` on a new connection; the first response, once the server closes or within 5 s. */
  const send = (raw: string) =>
    new Promise<Answer>((resolve) => {
      const started = Date.now();
      const { port } = new URL(gw.url);
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(raw, 'latin1'));
      let text = '';
      const done = (closed: boolean) => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, ms: Date.now() - started, closed });
      };
      const timer = setTimeout(() => done(false), 5000);
      socket.on('data', (d) => (text += d.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => done(true));
    });

  const body = () => JSON.stringify({ id: nextId(), name: 'Framing' });
  const auth = `Authorization: Bearer ${e2e.WEBHOOK_TOKEN}\r\n`;
  const post = (headers: string, payload = body(), version = '1.1') =>
    `POST /plant/webhook HTTP/${version}\r\n${headers}Content-Type: application/json\r\n` +
    `Content-Length: ${payload.length}\r\n\r\n${payload}`;
  const chunked = (headers: string, chunks: string) =>
    `POST /plant/webhook HTTP/1.1\r\nHost: x\r\n${auth}${headers}Content-Type: application/json\r\n` +
    `Transfer-Encoding: chunked\r\n\r\n${chunks}`;

  it('serves the well-formed request, chunked or with a Content-Length (the control)', async () => {
    const close = 'Connection: close\r\n';
    expect((await send(post(`Host: x\r\n${auth}${close}`))).status).toBe(200);
    const b = body();
    const chunks = `${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`;
    expect((await send(chunked(close, chunks))).status).toBe(200);
  });

  // What llhttp let through, found by the fuzz run or by the same reasoning, and refused by the gateway now.
  it.each([
    ['two Host headers', post(`Host: x\r\nHost: y\r\n${auth}`), 400, /Host is sent more than once/],
    ['two Authorization headers', post(`Host: x\r\n${auth}${auth}`), 400, /Authorization is sent more than once/],
    [
      'two Content-Type headers',
      post(`Host: x\r\n${auth}Content-Type: text/plain\r\n`),
      400,
      /Content-Type is sent more than once/,
    ],
    ['two webhook-id headers', post(`Host: x\r\n${auth}webhook-id: a\r\nwebhook-id: b\r\n`), 400, /more than once/],
    [
      'two Content-Encoding headers',
      post(`Host: x\r\n${auth}Content-Encoding: identity\r\nContent-Encoding: identity\r\n`),
      400,
      /more than once/,
    ],
    ['an HTTP/1.1 request without Host', post(auth), 400, /needs a Host header/],
    ['a Host with userinfo', post(`Host: a@x\r\n${auth}`), 400, /Host header is not a valid/],
    ['a Host with a space', post(`Host: a x\r\n${auth}`), 400, /Host header is not a valid/],
    [
      'an absolute target naming another host',
      post(`Host: x\r\n${auth}`).replace('POST /plant/webhook', 'POST http://other.example/plant/webhook'),
      400,
      /another host/,
    ],
    ['an HTTP/2.0 request line', post(`Host: x\r\n${auth}`, body(), '2.0'), 505, /HTTP\/2\.0 is not served/],
    ['an HTTP/0.9 request line', post(`Host: x\r\n${auth}`, body(), '0.9'), 505, /HTTP\/0\.9 is not served/],
    // llhttp served these two (the first as HTTP/0.9, 200; the second as if single-spaced): found by the fuzzer.
    ['a request line without a version', 'GET /readyz\r\n\r\n', 400, /request line is not/],
    ['two spaces in the request line', post(`Host: x\r\n${auth}`).replace('POST ', 'POST  '), 400, /request line/],
    ['two spaces before the version', post(`Host: x\r\n${auth}`).replace(' HTTP', '  HTTP'), 400, /request line/],
    [
      'a malformed request line pipelined after a valid request',
      `GET /livez HTTP/1.1\r\nHost: x\r\n\r\n${post(`Host: x\r\n${auth}`).replace('POST ', 'POST  ')}`,
      400,
      /request line/,
    ],
    ['Transfer-Encoding: gzip, chunked', chunked('', '0\r\n\r\n').replace(': chunked', ': gzip, chunked'), 501, /gzip/],
    [
      'Transfer-Encoding in HTTP/1.0',
      chunked('', '0\r\n\r\n').replace('HTTP/1.1', 'HTTP/1.0'),
      400,
      /not defined in HTTP\/1\.0/,
    ],
  ])('refuses %s', async (_case, raw, status, detail) => {
    const answer = await send(raw);
    expect(answer.status).toBe(status);
    expect(answer.text).toMatch(/content-type: application\/problem\+json/i);
    expect(answer.text).toMatch(detail);
    expect(answer.closed).toBe(true); // what follows on the connection can no longer be framed with confidence
  });

  it('refuses a malformed request line split across packets, and serves nothing of it', async () => {
    const { port } = new URL(gw.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => {
      const timer = setTimeout(resolve, 5000);
      socket.on('close', () => resolve(clearTimeout(timer)));
    });
    const key = `framing-${nextId()}`;
    const raw = post(`Host: x\r\n${auth}webhook-id: ${key}\r\n`).replace('POST ', 'POST  ');
    for (const piece of [raw.slice(0, 3), raw.slice(3, 30), raw.slice(30)]) {
      socket.write(piece, 'latin1');
      await new Promise((r) => setTimeout(r, 50));
    }
    await closed;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    // Not served behind the 400: the same webhook-id with another plant is a new key (200), not a conflict (409).
    const again = await send(post(`Host: x\r\n${auth}webhook-id: ${key}\r\nConnection: close\r\n`));
    expect(again.status).toBe(200);
  });

  // Fastify's router answered these itself, as application/json with a Fastify code and, for the long
  // parameter, a 414 that no operation documents; found by the fuzzer.
  it.each([
    ['a lone %', '/plants/%', 400, /percent-encoding/],
    ['an escape that is not UTF-8', '/plants/%FF', 400, /percent-encoding/],
    ['an escape that is not hex', '/subscriptions/%ZZ', 400, /percent-encoding/],
    ['a path parameter over 100 characters', `/plants/${'a'.repeat(101)}`, 404, /more than 100 characters/],
    ['a long parameter, without a token', `/subscriptions/${'a'.repeat(300)}`, 404, /more than 100 characters/],
  ])('answers a router error (%s) as problem+json', async (_case, path, status, detail) => {
    const token = path.startsWith('/plants') ? auth.replace(e2e.WEBHOOK_TOKEN, e2e.ADMIN_TOKEN) : '';
    const answer = await send(`GET ${path} HTTP/1.1\r\nHost: x\r\n${token}Connection: close\r\n\r\n`);
    expect(answer.status).toBe(status);
    expect(answer.text).toMatch(/content-type: application\/problem\+json/i);
    expect(answer.text).toMatch(/x-request-id: /i);
    expect(answer.text).toMatch(/x-content-type-options: nosniff/i); // the security headers too
    const problem = JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4));
    expect(problem).toMatchObject({ status, type: expect.stringMatching(/^https:/) });
    expect(problem.detail).toMatch(detail);
  });

  it.each(['10001', '10000000', 'F'.repeat(30)])(
    'refuses a chunk declared as 0x%s bytes with 413 at once, not after the request timeout',
    async (size) => {
      const answer = await send(chunked('', `${size}\r\n{"id":1,`));
      expect(answer.status).toBe(413);
      expect(answer.text).toMatch(/declared larger than 65536 bytes/);
      expect(answer.ms).toBeLessThan(4000); // the request timeout is 20 s
      expect(answer.closed).toBe(true);
    },
  );

  it('refuses chunks that together declare more than the limit, at the chunk that passes it', async () => {
    const chunk = `8000\r\n${' '.repeat(0x8000)}\r\n`; // 32 KiB each; the third passes 64 KiB
    const answer = await send(chunked('', `${chunk}${chunk}8000\r\n`));
    expect(answer.status).toBe(413);
    expect(answer.ms).toBeLessThan(4000);
  });

  // Found by the fuzzer (seeds 424242 and 1337): a GET carrying a chunked body is answered before its body is over;
  // when its chunks then passed the limit, a 413 followed on the same connection: two answers to one request, which
  // a proxy in front pairs with the next request it sends (a desync).
  // Found by the fuzzer again (seed 1571143708): an answer written by a hook inside Fastify's own request listener
  // (a token in the query string, refused at onRequest) went out before the listener that adds Connection: close
  // had run; the sender then sent its next request on a connection the body passing the limit closed under it.
  it.each([
    ['a route handler', 'GET /healthz', 200],
    ['an onRequest hook', 'POST /plant/webhook?access_token=x', 400],
  ])(
    'answers a request once, answered by %s: a body passing the limit after its answer closes the connection, no second answer',
    async (_by, line, status) => {
      const { port } = new URL(gw.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      let text = '';
      socket.on('data', (d) => (text += d.toString('latin1')));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      const chunk = `8000\r\n${' '.repeat(0x8000)}\r\n`; // 32 KiB each; the third passes 64 KiB
      socket.write(`${line} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}`, 'latin1');
      await waitFor('the answer', () => /\r\n\r\n/.test(text), 5000);
      socket.write(`${chunk}8000\r\n`, 'latin1');
      await Promise.race([closed, new Promise((r) => setTimeout(r, 5000))]);
      expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual([`HTTP/1.1 ${status}`]);
      expect(text).toMatch(/\r\nconnection: close\r\n/i); // answered before its body was in: not to be reused
      expect(socket.destroyed || socket.readableEnded).toBe(true);
      socket.destroy();
    },
  );

  // Found by the fuzzer (seed 2139588441): the gateway process exited. The decoded body was refused as too large
  // (413) and the decoder no longer listened to; the truncated gzip then failed, and that error, with no listener
  // left, was thrown. (The fuzzer's body was 40 KB of bytes that are not UTF-8, too large only because Fastify
  // counted the body as a string, three bytes each; bodies are counted in bytes now, so this one is over the limit.)
  it('outlives a gzip body refused as too large that then fails to decode', async () => {
    const gzip = zlib.gzipSync(Buffer.alloc(100_000, 0xff)); // over the 64 KiB limit once decoded
    const truncated = gzip.subarray(0, gzip.length - 8).toString('latin1');
    const answer = await send(
      `POST /plant/webhook HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n` +
        `Content-Encoding: gzip\r\nContent-Length: ${truncated.length}\r\nConnection: close\r\n\r\n${truncated}`,
    );
    expect(answer.status).toBe(413);
    await new Promise((r) => setTimeout(r, 200)); // the decoder's error comes after the answer
    expect((await send(post(`Host: x\r\n${auth}Connection: close\r\n`))).status).toBe(200);
  });

  // Found by the fuzzer (seed 181809951): a 415 sent before the body, with Connection: close, never reached a
  // sender that went on writing its body: the gateway closed with the body's bytes unread, its kernel answered them
  // with a reset, and the sender's write failed before it had read the answer. A lingering close keeps reading.
  it.each([
    ['415 for a Content-Type it does not parse', 'Content-Type: application/jsonx\r\n' + auth, 415],
    ['401 for a wrong token', 'Content-Type: application/json\r\nAuthorization: Bearer wrong\r\n', 401],
    ['404 for a path with no route', 'Content-Type: application/json\r\n' + auth, 404],
    // Seed 424242 of the fuzzer: Node's parser refused the head, and the answer was followed by destroy(), a reset.
    ['431 for headers too large', `X-Big: ${'K'.repeat(20_000)}\r\n` + auth, 431],
    ['400 for a header line that is not HTTP', 'Not a header\r\n' + auth, 400],
  ])('delivers a %s to a sender still writing its body', async (_case, headers, status) => {
    const { port } = new URL(gw.url);
    const path = status === 404 ? '/no/such/route' : '/plant/webhook';
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    let failed: Error | null = null;
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', (err) => (failed = err));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`);
    // Not reading meanwhile, as a client busy writing its body does not: the answer waits in our buffer.
    socket.pause();
    await new Promise((r) => setTimeout(r, 150));
    const piece = `400\r\n${' '.repeat(0x400)}\r\n`;
    for (let i = 0; i < 10 && !socket.destroyed; i++) {
      socket.write(piece);
      await new Promise((r) => setTimeout(r, 20));
    }
    socket.resume();
    await new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.once('close', () => resolve());
      setTimeout(() => (socket.end('0\r\n\r\n'), resolve()), 500);
    });
    socket.destroy();
    expect({ failed: failed === null ? null : String(failed), status: text.slice(0, 12) }).toEqual({
      failed: null,
      status: `HTTP/1.1 ${status}`,
    });
    expect(text).toMatch(/content-type: application\/problem\+json/i);
  });

  // What llhttp (Node's parser) refuses itself: kept here so that a Node upgrade that relaxes one is noticed.
  it.each([
    ['two equal Content-Length headers', post(`Host: x\r\n${auth}Content-Length: 40\r\n`)],
    ['a Content-Length list', post(`Host: x\r\n${auth}`).replace(/Content-Length: (\d+)/, 'Content-Length: $1, $1')],
    ['a Content-Length with a sign', post(`Host: x\r\n${auth}`).replace('Content-Length: ', 'Content-Length: +')],
    ['Transfer-Encoding with Content-Length', chunked('Content-Length: 5\r\n', '0\r\n\r\n')],
    ['two Transfer-Encoding headers', chunked('Transfer-Encoding: chunked\r\n', '0\r\n\r\n')],
    ['Transfer-Encoding: chunked, gzip', chunked('', '0\r\n\r\n').replace(': chunked', ': chunked, gzip')],
    ['Transfer-Encoding: identity', chunked('', '').replace(': chunked', ': identity')],
    ['an obs-fold header line', post(`Host: x\r\n${auth}X-Folded: a\r\n  b\r\n`)],
    ['a space before the colon', post(`Host : x\r\n${auth}`)],
    ['bare LF line ends', post(`Host: x\r\n${auth}`).replace(/\r\n/g, '\n')],
    ['a NUL in a header value', post(`Host: x\r\n${auth}X-A: a\0b\r\n`)],
    ['a chunk size line ended by a bare LF', chunked('', '3\nabc\n0\n\n')],
    ['an HTTP/1.2 request line', post(`Host: x\r\n${auth}`, body(), '1.2')],
  ])('llhttp refuses %s with 400 problem+json', async (_case, raw) => {
    const answer = await send(raw);
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/content-type: application\/problem\+json/i);
    expect(answer.closed).toBe(true);
  });
});
