import http from 'node:http';
import { Consumer } from 'kafkajs';
import { PLANT_CREATED_TOPIC } from '@app/contracts';
import { exitOf, freePort, spawnBuiltApp } from '../../tools/harness/processes';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// SIGTERM while webhooks are in flight: every request already received is answered 200 only once its event is
// in Kafka, the producer is flushed, and the process exits 0. Nothing accepted is lost.
describe('gateway graceful shutdown', () => {
  let consumer: Consumer;
  const seen = new Set<string>();
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    await e2e.prepareTestInfrastructure();
    consumer = await e2e.startReader(PLANT_CREATED_TOPIC, (message) => {
      const id = message.headers?.ce_id?.toString(); // poison written by other suites has none
      if (id) seen.add(id);
    });
  });

  afterAll(() => consumer?.disconnect());

  /** The built gateway in its own process (so it can be signalled), once it answers /readyz. */
  async function readyGateway(env: Record<string, string> = {}) {
    const port = await freePort();
    const { child, output } = spawnBuiltApp('gateway', e2e.baseEnv({ PORT: String(port), HOST: '127.0.0.1', ...env }));
    const url = `http://127.0.0.1:${port}`;
    const ready = async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok;
    await waitFor('the gateway to be ready', ready, 30000, 200).catch((err) => {
      throw new Error(`${err.message}\n${output.join('')}`);
    });
    return { child, output, url };
  }

  it('answers the requests in flight, flushes the producer and exits 0', async () => {
    const { child, output, url } = await readyGateway();

    // Requests in flight: headers and half the body sent before SIGTERM, the rest after it.
    const encoder = new TextEncoder();
    const finishers: (() => void)[] = [];
    const inFlight = Array.from({ length: 20 }, () => {
      const body = JSON.stringify({ id: nextId(), name: 'In flight' });
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(encoder.encode(body.slice(0, 10)));
          finishers.push(() => {
            c.enqueue(encoder.encode(body.slice(10)));
            c.close();
          });
        },
      });
      return fetch(`${url}/plant/webhook`, {
        method: 'POST',
        headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}`, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
    });
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    // A new request now is not accepted: refused at the socket, or a 503 problem telling the sender to retry.
    const late = await e2e.postPlant(url, { id: nextId(), name: 'Too late' }).catch((err: Error) => err);
    if (late instanceof Response) {
      expect(late.status).toBe(503);
      expect(late.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(late.headers.get('retry-after')).toBeTruthy();
    }
    finishers.forEach((finish) => finish());
    const responses = await Promise.all(inFlight);
    const { code } = await exitOf(child);

    expect({ code, output: code === 0 ? '' : output.join('').slice(-3000) }).toEqual({ code: 0, output: '' });
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    const eventIds = await Promise.all(responses.map(async (r) => ((await r.json()) as { eventId: string }).eventId));
    await waitFor('every acknowledged event in Kafka', () => eventIds.every((id) => seen.has(id)), 20000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60000);

  it('answers a request that arrives on a kept-alive connection during the drain with 503 and Connection: close, not a reset', async () => {
    const { child, url } = await readyGateway({ SHUTDOWN_IDLE_WAIT_MS: '3000' });
    // One socket, kept alive between requests, as a sender's HTTP client pool keeps it.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const post = () =>
      new Promise<{ status: number; connection?: string; type?: string }>((resolve, reject) => {
        const body = JSON.stringify({ id: nextId(), name: 'Kept alive' });
        const req = http.request(
          `${url}/plant/webhook`,
          {
            method: 'POST',
            agent,
            headers: {
              authorization: `Bearer ${e2e.WEBHOOK_TOKEN}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                connection: res.headers.connection,
                type: text && JSON.parse(text).type,
              }),
            );
          },
        );
        req.on('socket', (s) => sockets.add(s));
        req.on('error', reject);
        req.end(body);
      });
    expect((await post()).status).toBe(200);
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const during = await post();
    expect(sockets.size).toBe(1); // the same kept-alive socket
    expect(during).toEqual({ status: 503, connection: 'close', type: 'https://plant.store/problems/unavailable' });
    const { code } = await exitOf(child);
    agent.destroy();
    expect(code).toBe(0);
  }, 60000);
});
