import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { Consumer, KafkaMessage } from 'kafkajs';
import { fc } from '@fast-check/jest';
import { OPERATIONAL_EVENT_TYPES, PLANT_CREATED_TOPIC, seedDocument } from '@app/contracts';
import * as e2e from '../../tools/harness/stack';
import { adminClient } from '../../tools/harness/admin';
import { waitFor } from '../../tools/harness/wait';

// The gateway alone, against the real broker: what a sender of the New Plant webhook sees.
describe('gateway: POST /plant/webhook', () => {
  let gw: e2e.RunningGateway;
  let consumer: Consumer;
  const seen = new Map<string, KafkaMessage>();
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    gw = await e2e.startGateway(e2e.baseEnv({ PUBLISH_TIMEOUT_MS: '1500', WEBHOOK_MAX_BYTES: '1024' }));
    // Records other suites wrote straight to the topic (poison) have no ce_id: skip them, never throw.
    consumer = await e2e.startReader(PLANT_CREATED_TOPIC, (message) => {
      const id = message.headers?.ce_id?.toString();
      if (id) seen.set(id, message);
    });
  });

  afterAll(async () => {
    await consumer?.disconnect();
    await gw?.close();
  });

  const problemOf = async (res: Response) => {
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    return (await res.json()) as { type: string; status: number; detail?: string; errors?: { field: string }[] };
  };

  it('answers 200 with the event id, and the CloudEvent is in Kafka keyed by plant id', async () => {
    const id = nextId();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await e2e.postPlant(gw.url, { id, name: 'Monstera', tag: 'indoor' }, { traceparent });
    expect(res.status).toBe(200);
    const { eventId } = (await res.json()) as { eventId: string };
    const record = await waitFor('the record in Kafka', () => seen.get(eventId));
    expect(record.key!.toString()).toBe(String(id));
    expect(record.headers!.traceparent!.toString()).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(JSON.parse(record.value!.toString())).toMatchObject({
      specversion: '1.0',
      id: eventId,
      type: 'plant.created',
      source: '/plant-store/gateway',
      datacontenttype: 'application/json',
      data: { id, name: 'Monstera', tag: 'indoor' },
    });
  });

  it('gives a retry with the same webhook-id (or Idempotency-Key) the same event id', async () => {
    const body = { id: nextId(), name: 'Fern' };
    const ids = [];
    const attempts: Record<string, string>[] = [
      { 'webhook-id': 'msg_e2e_1' },
      { 'webhook-id': 'msg_e2e_1' },
      { 'idempotency-key': 'msg_e2e_1' },
    ];
    for (const headers of attempts) {
      const res = await e2e.postPlant(gw.url, body, headers);
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { eventId: string }).eventId);
    }
    expect(new Set(ids).size).toBe(1);
    const other = await e2e.postPlant(gw.url, body, { 'webhook-id': 'msg_e2e_2' });
    expect(((await other.json()) as { eventId: string }).eventId).not.toBe(ids[0]);
  });

  it('refuses a webhook-id reused for a different plant with a 409 naming the key, never a silent 200', async () => {
    const key = `msg_${randomUUID()}`;
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: 'Fern' }, { 'webhook-id': key })).status).toBe(200);
    for (const changed of [
      { id, name: 'Fern, renamed' },
      { id: nextId(), name: 'Fern' },
    ]) {
      const res = await e2e.postPlant(gw.url, changed, { 'webhook-id': key });
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await res.json()) as { detail: string; idempotencyKey: string };
      expect(problem.idempotencyKey).toBe(key);
      expect(problem.detail).toMatch(/already used for a different plant.*new webhook needs a new webhook-id/);
    }
    expect((await e2e.postPlant(gw.url, { id, name: 'Fern' }, { 'webhook-id': key })).status).toBe(200); // a retry
  });

  it.each([
    ['no Authorization header', {}, 'Bearer realm="plant-store"'],
    ['a wrong token', { authorization: 'Bearer not-the-token' }, 'Bearer realm="plant-store", error="invalid_token"'],
    ['a malformed header', { authorization: 'Bearer' }, 'Bearer realm="plant-store", error="invalid_request"'],
    ['another scheme', { authorization: `Basic ${e2e.WEBHOOK_TOKEN}` }, 'Bearer realm="plant-store"'],
    [
      'an admin token',
      { authorization: `Bearer ${e2e.ADMIN_TOKEN}` },
      'Bearer realm="plant-store", error="invalid_token"',
    ],
  ])('answers 401 with a Bearer challenge for %s', async (_case, headers, challenge) => {
    const res = await fetch(`${gw.url}/plant/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ id: 1, name: 'x' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    expect((await problemOf(res)).type).toBe('https://plant.store/problems/unauthorized');
  });

  it.each([
    ['{"id": 1, "name": ', /not valid JSON/],
    ['', /empty/],
  ])('answers 400 for malformed JSON %p', async (body, detail) => {
    const res = await e2e.postPlant(gw.url, body);
    expect(res.status).toBe(400);
    const problem = await problemOf(res);
    expect(problem.type).toBe('https://plant.store/problems/malformed-json');
    expect(problem.detail).toMatch(detail);
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], [null]])(
    'answers 415 for Content-Type %p',
    async (type) => {
      const headers: Record<string, string> = { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` };
      if (type) headers['content-type'] = type;
      const res = await fetch(`${gw.url}/plant/webhook`, { method: 'POST', headers, body: '{"id":1,"name":"x"}' });
      expect(res.status).toBe(415);
      const problem = await problemOf(res);
      expect(problem.type).toBe('https://plant.store/problems/unsupported-media-type');
      expect(problem.detail).toBe('Send a JSON body with the header "Content-Type: application/json"');
    },
  );

  it('answers 413 for a body over WEBHOOK_MAX_BYTES, chunked or not, never truncating it', async () => {
    const big = JSON.stringify({ id: 1, name: 'x'.repeat(2000) });
    const res = await e2e.postPlant(gw.url, big);
    expect(res.status).toBe(413);
    expect((await problemOf(res)).type).toBe('https://plant.store/problems/payload-too-large');
    const chunked = await fetch(`${gw.url}/plant/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big.slice(0, 600)));
          c.enqueue(new TextEncoder().encode(big.slice(600)));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it('answers 422 naming each offending field', async () => {
    const res = await e2e.postPlant(gw.url, { id: 'seven', tag: 3 });
    expect(res.status).toBe(422);
    const problem = await problemOf(res);
    expect(problem.type).toBe('https://plant.store/problems/validation-failed');
    expect(problem.errors!.map((e) => e.field).sort()).toEqual(['id', 'name', 'tag']);
  });

  it('refuses ids that JSON cannot carry exactly (above 2^53 - 1) with 422 rather than rounding them', async () => {
    const res = await e2e.postPlant(gw.url, '{"id": 9007199254740993, "name": "Too big"}');
    expect(res.status).toBe(422);
    expect((await problemOf(res)).errors).toEqual([{ field: 'id', message: 'must be <= 9007199254740991' }]);
  });

  it('accepts what the schema accepts and refuses what it does not (property-based)', async () => {
    const valid = fc.record(
      { id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), name: fc.string(), tag: fc.string() },
      { requiredKeys: ['id', 'name'] },
    );
    const invalid = fc.oneof(
      valid.map((p) => ({ ...p, id: String(p.id) })),
      valid.map(({ name: _n, ...rest }) => rest),
      valid.map((p) => ({ ...p, id: (p.id % 1000) + 0.5 })),
      valid.map((p) => ({ ...p, name: 42 })),
    );
    await fc.assert(
      fc.asyncProperty(valid, async (p) => (await e2e.postPlant(gw.url, p)).status === 200),
      { numRuns: 25 },
    );
    await fc.assert(
      fc.asyncProperty(invalid, async (p) => (await e2e.postPlant(gw.url, p)).status === 422),
      { numRuns: 25 },
    );
  });

  // Issue 25, item 5: these were answered 200 and then dead-lettered (jsonb refuses \u0000 anywhere), or stored
  // rounded. A 200 means the plant will be stored as sent: each is a 422 naming its path.
  it.each([
    ['a NUL in an extra property', '{"id":7,"name":"Ficus","note":"a\\u0000b"}', 'note', /NUL/],
    ['a NUL in a property name', '{"id":7,"name":"Ficus","no\\u0000te":"x"}', 'no\\u0000te', /property name/],
    ['a lone surrogate, nested', '{"id":7,"name":"Ficus","care":{"log":["ok","\\ud83c"]}}', 'care.log.1', /surrogate/],
    ['a number beyond 2^53', '{"id":7,"name":"Ficus","stock":9007199254740993}', 'stock', /exactly/],
    ['a number that overflows', '{"id":7,"name":"Ficus","care":[{"ml":1e400}]}', 'care.0.ml', /exactly/],
    ['a decimal beyond a double', '{"id":7,"name":"Ficus","ph":6.50000000000000000001}', 'ph', /exactly/],
  ])('refuses %s with 422 naming its path, never a 200 for what cannot be stored', async (_case, body, field, why) => {
    const res = await e2e.postPlant(gw.url, body);
    expect(res.status).toBe(422);
    expect((await problemOf(res)).errors).toEqual([{ field, message: expect.stringMatching(why) }]);
  });

  it('refuses text the store cannot hold in admin bodies too, naming the field', async () => {
    const admin = adminClient(gw.url);
    const res = await admin.call('POST', '/deliveries/retry', { plantId: 1, note: { 'x\u0000': 1 } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([{ field: 'note.x\\u0000', message: expect.any(String) }]));
    const rounded = await fetch(`${gw.url}/deliveries/retry`, {
      method: 'POST',
      headers: { authorization: `Bearer ${e2e.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"plantId": 9007199254740993}',
    });
    expect(rounded.status).toBe(422);
    expect(((await rounded.json()) as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(['plantId']);
  });

  // Item 6: a 16,000-character webhook-id was answered 200 and held in memory (100,000 of them: ~1.5 GiB).
  it.each([
    ['webhook-id', 'k'.repeat(16_000)],
    ['webhook-id', 'k'.repeat(256)],
    ['idempotency-key', 'k'.repeat(256)],
    ['webhook-id', 'msg with spaces'],
    ['webhook-id', 'msg_caf\u00e9'],
    ['plant-store-hops', '1234567'],
    ['plant-store-origin', 'o'.repeat(129)],
  ])('refuses a %s header beyond its bound with 400 naming it', async (header, value) => {
    const res = await e2e.postPlant(gw.url, { id: nextId(), name: 'Fern' }, { [header]: value });
    expect(res.status).toBe(400);
    const problem = (await problemOf(res)) as { detail?: string; header?: string };
    expect(problem.header).toBe(header);
    expect(problem.detail).toContain(`The header ${header} must`);
  });

  // Lengths are checked in admin-bodies.spec.ts: this gateway's 1 KiB body limit answers 413 first.
  it('refuses a subscription token a header cannot carry, which would fail every delivery', async () => {
    const admin = adminClient(gw.url);
    for (const token of ['two words', 'line\r\nbreak']) {
      const res = await admin.call('POST', '/subscriptions', { url: 'https://example.com/hook', token });
      expect({ status: res.status, fields: res.body?.errors?.map((e: { field: string }) => e.field) }).toEqual({
        status: 422,
        fields: ['token'],
      });
    }
  });

  it('takes a key at its bound, and ignores a traceparent or x-request-id beyond theirs instead', async () => {
    const key = 'k'.repeat(255);
    const first = await e2e.postPlant(gw.url, { id: nextId(), name: 'Fern' }, { 'webhook-id': key });
    expect(first.status).toBe(200);
    const res = await e2e.postPlant(
      gw.url,
      { id: nextId(), name: 'Fern' },
      {
        traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01${'-x'.repeat(500)}`,
        'x-request-id': 'r'.repeat(129),
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/); // replaced, not echoed
    const { eventId } = (await res.json()) as { eventId: string };
    const record = await waitFor('the record in Kafka', () => seen.get(eventId));
    expect(record.headers!.traceparent!.toString()).not.toContain('4bf92f3577b34da6a3ce929d0e0e4736'); // a new trace
  });

  // Item 7: ?since=2016-12-31T23:59:60Z passed the format check, became an Invalid Date and reached SQL: 500.
  it.each([
    ['GET', '/deliveries?since=2016-12-31T23:59:60Z', 'since'],
    ['GET', '/deliveries?until=2016-12-31T23:59:60%2B00:00', 'until'],
    ['GET', '/audit?since=2016-12-31T23:59:60Z', 'since'],
    ['GET', '/audit?until=2015-06-30T23:59:60Z', 'until'],
    ['POST', `/subscriptions/${randomUUID()}/recover?since=2016-12-31T23:59:60Z`, 'since'],
    ['GET', '/deliveries?plantId=9007199254740993', 'plantId'],
    ['GET', `/plants?cursor=${Buffer.from('s:9007199254740993').toString('base64url')}`, 'cursor'],
  ])('answers %s %s with 422 naming the parameter, never a 500', async (method, path, field) => {
    const res = await adminClient(gw.url).call(method, path);
    expect({ status: res.status, fields: res.body.errors?.map((e: { field: string }) => e.field) }).toEqual({
      status: 422,
      fields: [field],
    });
  });

  it('answers a leap second in a body date with 422 naming the field', async () => {
    const res = await adminClient(gw.url).call('POST', '/deliveries/retry', { since: '2016-12-31T23:59:60Z' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'since', message: 'must match format "date-time"' }]);
  });

  it('serves the interface document: the seed exactly, plus our operations, valid OpenAPI 3.1', async () => {
    const doc = await (await fetch(`${gw.url}/openapi.json`)).json();
    for (const key of ['openapi', 'info', 'servers', 'security'] as const) expect(doc[key]).toEqual(seedDocument[key]);
    // New Plant exactly as the seed has it, and beside it only the operational webhooks.
    expect(doc.webhooks['/plant/webhook']).toEqual(seedDocument.webhooks['/plant/webhook']);
    expect(Object.keys(doc.webhooks)).toEqual(['/plant/webhook', ...OPERATIONAL_EVENT_TYPES]);
    for (const name of ['Plant', 'NewPlant', 'Error'])
      expect(doc.components.schemas[name]).toEqual(seedDocument.components.schemas[name]);
    expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/plants', '/plants/{id}', '/subscriptions', '/deliveries']),
    );
    const lint = JSON.parse(
      execFileSync('node', [require.resolve('../../tools/harness/lint-openapi.mjs')], {
        input: JSON.stringify(doc),
      }).toString(),
    );
    expect(lint).toEqual(expect.objectContaining({ valid: true }));
  });

  it('serves a docs page, health and readiness publicly, and metrics only on the metrics port', async () => {
    const docs = await fetch(`${gw.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger-ui/i);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${gw.url}/readyz`)).json()).toMatchObject({ status: 'ready' });
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
    const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/plant_store_http_requests_total\{[^}]*route="\/plant\/webhook"[^}]*status="200"/);
    expect(metrics).toMatch(/plant_store_publish_latency_seconds_bucket/);
    expect(metrics).toMatch(/plant_store_publishes_in_flight/);
    // Every in-memory bound is read beside its limit.
    expect(metrics).toMatch(/^plant_store_publishes_in_flight_limit\{app="gateway"\} 1000$/m);
    expect(metrics).toMatch(/^plant_store_idempotency_keys_limit\{app="gateway"\} 100000$/m);
    expect(metrics).toMatch(/^plant_store_idempotency_keys\{app="gateway"\} \d+$/m);
  });

  it('answers unknown routes with problem+json 404', async () => {
    const res = await fetch(`${gw.url}/nope`);
    expect(res.status).toBe(404);
    expect((await problemOf(res)).status).toBe(404);
  });
});
