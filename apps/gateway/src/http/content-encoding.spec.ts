import zlib from 'node:zlib';
import Fastify, { FastifyInstance } from 'fastify';
import { decodeRequestBodies } from './content-encoding';

// Every request here counts as authenticated before its body: the turn accounting is what is under test.
jest.mock('../auth/before-body', () => ({ passedBeforeBody: () => true }));

const TURNS = 2;

describe('decodeRequestBodies', () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = Fastify({ forceCloseConnections: true });
    app.removeContentTypeParser(['text/plain']);
    decodeRequestBodies(app, 64 * 1024, TURNS);
    app.post('/json', async (req) => ({ got: req.body }));
    app.get('/no-body', async () => ({ ok: true }));
    app.delete('/no-body', async () => ({ ok: true }));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  const gzipped = (value: unknown) => zlib.gzipSync(Buffer.from(JSON.stringify(value)));
  const send = (method: string, path: string, headers: Record<string, string>, body?: Buffer) =>
    fetch(`${base}${path}`, {
      method,
      headers: { 'content-encoding': 'gzip', ...headers },
      body: body as BodyInit | undefined,
      signal: AbortSignal.timeout(3000),
    });

  it('decodes a gzip body', async () => {
    const res = await send('POST', '/json', { 'content-type': 'application/json' }, gzipped({ a: 1 }));
    expect(await res.json()).toEqual({ got: { a: 1 } });
  });

  // The class of issue #34's fuzz finding: an answer that never reads the body kept its decoder and its turn,
  // and after HTTP_MAX_CONCURRENT_DECODES of them no compressed body was answered again.
  it.each([
    ['a content type no parser takes (415)', 'POST', '/json', { 'content-type': 'text/plain' }, gzipped('x')],
    ['a route that reads no body', 'DELETE', '/no-body', {}, undefined],
    ['a GET that carries a compressed body', 'GET', '/no-body', {}, undefined],
    ['an unknown route', 'POST', '/nowhere', { 'content-type': 'application/json' }, gzipped({})],
  ] as const)('gives the turn back after %s', async (_case, method, path, headers, body) => {
    for (let i = 0; i < TURNS * 3; i++) {
      const res = await send(method, path, headers, body);
      expect(res.status).toBeLessThan(500);
      await res.arrayBuffer();
    }
    const res = await send('POST', '/json', { 'content-type': 'application/json' }, gzipped({ after: path }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ got: { after: path } });
  });

  it('gives the turn back when the sender goes away mid-body, and to one that waits', async () => {
    const abort = new AbortController();
    // A body announced and never finished: it holds a turn until its request closes.
    const stalled = Array.from({ length: TURNS }, () =>
      fetch(`${base}/json`, {
        method: 'POST',
        headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
        body: new ReadableStream({ start: (c) => c.enqueue(gzipped({ big: 'x'.repeat(1000) }).subarray(0, 10)) }),
        duplex: 'half',
        signal: abort.signal,
      } as RequestInit).catch(() => undefined),
    );
    await new Promise((r) => setTimeout(r, 200));
    const waiting = send('POST', '/json', { 'content-type': 'application/json' }, gzipped({ waited: true }));
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    await Promise.all(stalled);
    const res = await waiting;
    expect(await res.json()).toEqual({ got: { waited: true } });
  });
});
