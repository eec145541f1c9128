import net from 'node:net';
import Fastify, { FastifyInstance, FastifyRequest } from 'fastify';
import { sendProblem } from '@app/observability';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { BodyBudget } from './body-budget';
import { clientErrorHandler } from './http-limits';
import { parseJsonBodies } from './json-parser';

// The parser on a real Fastify server and real sockets: every way a request with a body ends (answered, refused,
// aborted by its sender, cut by the request timeout, malformed) leaves the budget as it found it.
const BODY = 10_000; // the per-request limit here; the budget holds four such bodies, a sender two
const REQUEST_TIMEOUT_MS = 1000;

describe('parseJsonBodies', () => {
  let fastify: FastifyInstance;
  let budget: BodyBudget;
  let metrics: GatewayMetrics;
  let port: number;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    metrics = new GatewayMetrics();
    budget = new BodyBudget(4 * BODY, 2 * BODY);
    fastify = Fastify({
      requestTimeout: REQUEST_TIMEOUT_MS,
      // Node swaps the two timeouts when the headers' is the longer: it must be the shorter, as in serverLimits.
      http: { connectionsCheckingInterval: 100, headersTimeout: REQUEST_TIMEOUT_MS / 2 },
      clientErrorHandler: clientErrorHandler(metrics),
    });
    // As authenticateBeforeBody leaves it: the principal its guards found, here named by a header.
    fastify.addHook('onRequest', async (req: FastifyRequest & { user?: unknown }) => {
      const name = req.headers['x-sender'];
      if (typeof name === 'string') req.user = { kind: 'webhook', name, scope: null };
    });
    parseJsonBodies(fastify, { maxBytes: BODY, budget, metrics });
    fastify.setErrorHandler((err, req, reply) => sendProblem(reply, req, err));
    fastify.post('/echo', async (req) => ({ length: JSON.stringify(req.body).length }));
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    port = (fastify.server.address() as net.AddressInfo).port;
  });

  afterEach(() => sockets.splice(0).forEach((s) => s.destroy()));
  afterAll(() => fastify.close());

  /** A JSON body of exactly `bytes` bytes. */
  const json = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`;

  /** Sends a head announcing `body`, then the first `sent` bytes of it; the answer is read until the close. */
  async function post(sender: string, body: string, sent = body.length) {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    await new Promise((r) => socket.once('connect', r));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => undefined);
    const answer = new Promise<{ status: number; text: string }>((resolve) =>
      socket.once('close', () => resolve({ status: Number(text.slice(9, 12)), text })),
    );
    socket.write(
      `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
        `${sender ? `X-Sender: ${sender}\r\n` : ''}Connection: close\r\n\r\n${body.slice(0, sent)}`,
    );
    return { socket, answer, rest: () => socket.write(body.slice(sent)) };
  }

  /** Polls `check` until it holds (the server's side of a socket event comes a little after it). */
  async function until(check: () => boolean) {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  }

  it('reads a body whole, parses it, and gives its bytes back', async () => {
    const { answer } = await post('a', json(BODY));
    const { status, text } = await answer;
    expect(status).toBe(200);
    expect(text).toContain(`{"length":${BODY}}`);
    expect(budget.held).toBe(0);
  });

  it('refuses with a 503 problem past the budget and past a share, and the held bodies still complete', async () => {
    const held = await Promise.all(['a', 'a', 'b', 'b'].map((s) => post(s, json(BODY), BODY / 2)));
    await until(() => budget.held === 4 * BODY);

    const refused = async (reason: string) =>
      (await metrics.bodiesRefused.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
    const before = [await refused('budget'), await refused('sender_share')];
    const overBudget = await (await post('c', json(BODY), 10)).answer;
    expect(overBudget.status).toBe(503);
    expect(overBudget.text).toMatch(/content-type: application\/problem\+json/i);
    expect(overBudget.text).toMatch(/retry-after: 1/i);
    expect(overBudget.text).toMatch(/connection: close/i); // the unread rest of the body is not read
    expect(overBudget.text).toMatch(/HTTP_BODY_BUDGET_BYTES.*"reason":"body-budget"/);
    const overShare = await (await post('a', json(100))).answer;
    expect(overShare.status).toBe(503);
    expect(overShare.text).toMatch(/HTTP_BODY_SENDER_SHARE_BYTES.*"reason":"sender-share"/);
    expect([await refused('budget'), await refused('sender_share')]).toEqual([before[0] + 1, before[1] + 1]);
    expect(budget.held).toBe(4 * BODY); // the refusals took nothing

    held.forEach((h) => h.rest());
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(budget.held).toBe(0);
  });

  it('gives the bytes back when the sender goes away mid-body', async () => {
    const { socket } = await post('a', json(BODY), BODY / 2);
    await until(() => budget.held === BODY);
    socket.destroy();
    await until(() => budget.held === 0);
  });

  it('gives the bytes back when the request timeout cuts a body that stopped arriving (408)', async () => {
    const { answer } = await post('a', json(BODY), BODY / 2);
    await until(() => budget.held === BODY);
    const { status } = await answer;
    expect(status).toBe(408);
    expect(budget.held).toBe(0);
  });

  it('gives the bytes back when the body read whole is not JSON (400), or too large (413)', async () => {
    const malformed = await (await post('a', `{"a":${' '.repeat(BODY - 6)}`)).answer;
    expect(malformed.status).toBe(400);
    const tooLarge = await (await post('a', json(BODY + 1), 100)).answer;
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.text).toMatch(/WEBHOOK_MAX_BYTES/);
    expect(budget.held).toBe(0);
  });

  it('charges a request without a principal to its remote address', async () => {
    const anonymous = await post('', json(BODY), BODY / 2);
    await until(() => budget.heldBy('address:127.0.0.1') === BODY);
    anonymous.rest();
    expect((await anonymous.answer).status).toBe(200);
    expect(budget.held).toBe(0);
  });
});
