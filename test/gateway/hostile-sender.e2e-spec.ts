import net from 'node:net';
import zlib from 'node:zlib';
import { Consumer } from 'kafkajs';
import { PLANT_CREATED_TOPIC } from '@app/contracts';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// The gateway as a hostile or careless sender meets it. Each block replays one class of the black-box attack
// (issue #10) against the real gateway and broker: what it sent, and what must come back.
describe('gateway under hostile input', () => {
  let gw: e2e.RunningGateway;
  let consumer: Consumer;
  const records: string[] = []; // every plant.created value and header, as text
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    gw = await e2e.startGateway(
      e2e.baseEnv({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000', HTTP_MAX_CONNECTIONS: '20' }),
    );
    consumer = await e2e.startReader(PLANT_CREATED_TOPIC, (m) => {
      records.push(
        `${m.value?.toString() ?? ''} ${JSON.stringify(m.headers ?? {}, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString() : v))}`,
      );
    });
  });

  afterAll(async () => {
    await consumer?.disconnect();
    await gw?.close();
  });

  const problem = async (res: Response) => {
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    return (await res.json()) as { type: string; detail: string; errors?: { field: string; message: string }[] };
  };

  describe('bearer tokens outside the Authorization header (the attack: ?access_token= and a body field)', () => {
    const cases: [string, string, string, string | undefined][] = [
      ['POST', '/plant/webhook', e2e.WEBHOOK_TOKEN, JSON.stringify({ id: 1, name: 'x' })],
      ['GET', '/plants', e2e.WEBHOOK_TOKEN, undefined],
      ['GET', '/subscriptions', e2e.ADMIN_TOKEN, undefined],
      ['POST', '/subscriptions', e2e.ADMIN_TOKEN, JSON.stringify({ url: 'http://127.0.0.1:1/' })],
    ];

    it.each(cases)(
      '%s %s with a valid token in the query string is 400, never authenticated',
      async (method, path, token, body) => {
        const res = await fetch(`${gw.url}${path}?access_token=${token}`, {
          method,
          body,
          headers: body ? { 'content-type': 'application/json' } : {},
        });
        expect(res.status).toBe(400);
        expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_request"/);
        expect((await problem(res)).detail).toMatch(/Authorization: Bearer/);
      },
    );

    it.each(cases.filter((c) => c[3]))(
      '%s %s with a valid token in the body is 400 with a header, and 401 (body unread) without one',
      async (method, path, token, body) => {
        const withToken = JSON.stringify({ ...JSON.parse(body!), id: nextId(), access_token: token });
        const send = (headers: Record<string, string>) =>
          fetch(`${gw.url}${path}`, {
            method,
            body: withToken,
            headers: { 'content-type': 'application/json', ...headers },
          });
        const withHeader = await send({ authorization: `Bearer ${token}` });
        expect(withHeader.status).toBe(400);
        expect((await problem(withHeader)).detail).toMatch(/in the body/);
        // No Authorization header: refused before the body is read (see 'work before authentication').
        const without = await send({});
        expect(without.status).toBe(401);
      },
    );

    it('never writes a token into Kafka (the attack found one in every segment)', async () => {
      const marker = nextId();
      expect((await e2e.postPlant(gw.url, { id: marker, name: 'marker' })).status).toBe(200);
      await waitFor('the marker record', () => records.some((r) => r.includes(`"subject":"${marker}"`)));
      const leaking = records.filter((r) => r.includes(e2e.WEBHOOK_TOKEN) || r.includes(e2e.ADMIN_TOKEN));
      expect(leaking).toEqual([]);
    });
  });

  describe('bodies a store cannot hold or a parser cannot survive', () => {
    it.each([
      ['an array 5,000 levels deep', '['.repeat(5000) + ']'.repeat(5000)],
      [
        'an extra property 5,000 levels deep',
        `{"id":1,"name":"x","extra":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
      ],
    ])('answers 400 (not a retryable 503) for %s', async (_case, body) => {
      const res = await e2e.postPlant(gw.url, body, {});
      expect(res.status).toBe(400);
      expect((await problem(res)).type).toBe('https://plant.store/problems/nesting-too-deep');
    });

    it.each([
      ['NUL in name', `{"id":${1},"name":"Fic\\u0000us"}`, 'name'],
      ['NUL in tag', `{"id":${1},"name":"Ficus","tag":"\\u0000"}`, 'tag'],
      ['a lone surrogate in name', `{"id":${1},"name":"Fern \\ud83c"}`, 'name'],
    ])('answers 422 for %s instead of a 200 that could never be stored', async (_case, body, field) => {
      const res = await e2e.postPlant(gw.url, body);
      expect(res.status).toBe(422);
      expect((await problem(res)).errors).toEqual([{ field, message: expect.stringMatching(/NUL/) }]);
    });
  });

  describe('Content-Encoding', () => {
    const post = (body: Buffer | string, encoding: string) =>
      fetch(`${gw.url}/plant/webhook`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${e2e.WEBHOOK_TOKEN}`,
          'content-type': 'application/json',
          'content-encoding': encoding,
        },
        body: body as BodyInit,
      });

    it.each([
      ['gzip', zlib.gzipSync],
      ['deflate', zlib.deflateSync],
      ['br', zlib.brotliCompressSync],
    ] as const)('decodes a %s body and publishes the plant it holds', async (encoding, encode) => {
      const id = nextId();
      const res = await post(encode(Buffer.from(JSON.stringify({ id, name: `Compressed ${encoding}` }))), encoding);
      expect(res.status).toBe(200);
      await waitFor('the decoded event', () =>
        records.some((r) => r.includes(`"name":"Compressed ${encoding}"`) && r.includes(`"id":${id}`)),
      );
    });

    it('refuses a plain body labelled gzip with 400 saying so (it was answered 200 before)', async () => {
      const res = await post(JSON.stringify({ id: nextId(), name: 'not gzip' }), 'gzip');
      expect(res.status).toBe(400);
      expect((await problem(res)).detail).toMatch(/not valid gzip/);
    });

    it('answers 415 naming the accepted encodings for one it does not support', async () => {
      const res = await post(JSON.stringify({ id: nextId(), name: 'x' }), 'compress');
      expect(res.status).toBe(415);
      expect((await problem(res)).detail).toMatch(/gzip, deflate, br/);
    });

    it('applies the body limit to the decoded bytes (a small gzip that inflates past it is 413)', async () => {
      const bomb = zlib.gzipSync(Buffer.from(`{"id":1,"name":"${' '.repeat(1_000_000)}"}`));
      expect(bomb.length).toBeLessThan(4096);
      const res = await post(bomb, 'gzip');
      expect(res.status).toBe(413);
    });
  });

  describe('slow and greedy clients', () => {
    const connect = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const u = new URL(gw.url);
        const s = net.connect(Number(u.port), u.hostname, () => resolve(s)).on('error', reject);
      });
    const answerOf = (socket: net.Socket) =>
      new Promise<{ text: string; ms: number }>((resolve) => {
        const started = Date.now();
        let text = '';
        socket.on('data', (d) => (text += d));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ text, ms: Date.now() - started }));
      });

    it('cuts a body sent one byte at a time with a problem+json 408 (it was held 330 s)', async () => {
      const socket = await connect();
      const body = JSON.stringify({ id: nextId(), name: 'trickle' });
      socket.write(
        `POST /plant/webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${e2e.WEBHOOK_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      const answer = answerOf(socket);
      let i = 0;
      const timer = setInterval(
        () => (i < body.length - 1 && !socket.destroyed ? socket.write(body[i++]) : undefined),
        200,
      );
      const { text, ms } = await answer;
      clearInterval(timer);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
      expect(text).toMatch(/application\/problem\+json/);
      expect(ms).toBeLessThan(5000);
    });

    it('closes a connection whose headers trickle in (it took ~60 s)', async () => {
      const socket = await connect();
      const answer = answerOf(socket);
      const timer = setInterval(() => !socket.destroyed && socket.write('X-Slow: 1\r\n'), 200);
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      const { text, ms } = await answer;
      clearInterval(timer);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
      expect(ms).toBeLessThan(4000);
    });

    it('caps open connections (HTTP_MAX_CONNECTIONS) and counts the ones it drops', async () => {
      const held: net.Socket[] = [];
      try {
        for (let i = 0; i < 25; i++) held.push(await connect());
        await waitFor('dropped connections counted', async () => {
          const m = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
          return Number(/plant_store_http_connections_dropped_total\S* (\d+)/.exec(m)?.[1] ?? 0) >= 5;
        });
        expect(held.filter((s) => s.destroyed || s.readyState !== 'open').length).toBeGreaterThanOrEqual(5);
      } finally {
        held.forEach((s) => s.destroy());
      }
      // Room again once they are gone.
      await waitFor('the gateway to answer again', async () => (await fetch(`${gw.url}/healthz`)).ok);
    });
  });
});
