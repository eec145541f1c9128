import { Webhook } from 'standardwebhooks';
import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// Issue 28, part 4: a subscription's own headers go with each delivery; a secret one is sealed at rest and never
// shown again, in any response, the audit trail or the headers an attempt sent. In a database of its own, so the
// rows read are this suite's.
const SECRET = 'sk_live_9f8e7d6c5b4a39281706';

describe('custom headers', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    db = await e2e.scratchDatabase('headers');
    await receiver.start();
    const env = e2e.baseEnv({ DATABASE_URL: db.url, DELIVERY_POLL_MS: '200' });
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    worker = await e2e.startWorker(env); // first: its setup migrates the new database
    gw = await e2e.startGateway(env);
    admin = adminClient(gw.url);
  });

  afterAll(async () => {
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
  });

  it('sends them with each delivery, and never shows or stores a secret value in the clear', async () => {
    // The receiver echoes what it got: the attempt's recorded reply must not hand the secret back.
    receiver.behave('/echo', (r) => ({ status: 200, body: JSON.stringify(r.headers) }));
    const created = await admin.call('POST', '/subscriptions', {
      url: `${receiver.url}/echo`,
      headers: { 'X-Team': 'plants' },
      secretHeaders: { 'X-Api-Key': SECRET },
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body;
    expect(created.body.headers).toEqual({ 'X-Team': 'plants' });
    expect(created.body.secretHeaderNames).toEqual(['X-Api-Key']);

    const plantId = nextId();
    expect((await e2e.postPlant(gw.url, { id: plantId, name: 'Fern' })).status).toBe(200);
    const got = await waitFor('the delivery', () => receiver.on('/echo', plantId)[0], 30_000);
    expect(got.headers['x-team']).toBe('plants');
    expect(got.headers['x-api-key']).toBe(SECRET);
    // The contract is intact: signed as ever, with the sender's own headers.
    const signed = new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    expect(signed).toEqual({ id: plantId, name: 'Fern' });
    expect(got.headers['content-type']).toBe('application/json');

    // A test send carries them too.
    const test = await admin.call('POST', `/subscriptions/${id}/test`);
    expect(test.status).toBe(200);
    expect(receiver.on('/echo').at(-1)!.headers['x-api-key']).toBe(SECRET);
    expect(test.body.request.headers['X-Api-Key']).toBe('[secret header, not shown]');

    const [delivery] = await waitFor('the delivery recorded', async () => {
      const found = await admin.deliveriesOf(id);
      return found.length > 0 && found.every((d) => d.status === 'succeeded') ? found : null;
    });
    const detail = await admin.call('GET', `/deliveries/${delivery.id}`);
    expect(detail.body.request.headers).toMatchObject({
      'X-Team': 'plants',
      'X-Api-Key': '[secret header, not shown]',
    });
    expect(detail.body.attemptLog[0].responseBody).toContain('[redacted]');

    const patched = await admin.call('PATCH', `/subscriptions/${id}`, { headers: { 'X-Region': 'eu' } });
    expect(patched.body.headers).toEqual({ 'X-Team': 'plants', 'X-Region': 'eu' });
    expect(patched.body.secretHeaderNames).toEqual(['X-Api-Key']); // a merge patch: kept

    // Nowhere in any answer, nor in the database in the clear.
    const answers = [
      created.body,
      test.body,
      detail.body,
      patched.body,
      (await admin.call('GET', `/subscriptions/${id}`)).body,
      (await admin.call('GET', '/subscriptions')).body,
      (await admin.call('GET', `/audit?subscriptionId=${id}`)).body,
      (await admin.call('GET', `/deliveries?subscriptionId=${id}`)).body,
    ];
    for (const a of answers) expect(JSON.stringify(a)).not.toContain(SECRET);
    const tables = ['subscriptions', 'deliveries', 'outbox_events', 'audit_events'];
    for (const table of tables) {
      const { rows } = await db.pool.query(`SELECT t::text AS row FROM ${table} t`);
      for (const r of rows) expect(r.row).not.toContain(SECRET);
    }
    const { rows } = await db.pool.query('SELECT secret_headers FROM subscriptions WHERE id = $1', [id]);
    expect(rows[0].secret_headers['X-Api-Key']).toMatch(/^sealed:v1:/);

    // Removed (null): no longer sent.
    const removed = await admin.call('PATCH', `/subscriptions/${id}`, { secretHeaders: { 'x-api-key': null } });
    expect(removed.body.secretHeaderNames).toEqual([]);
    const second = nextId();
    expect((await e2e.postPlant(gw.url, { id: second, name: 'Moss' })).status).toBe(200);
    const next = await waitFor('the next delivery', () => receiver.on('/echo', second)[0], 30_000);
    expect(next.headers['x-api-key']).toBeUndefined();
    expect(next.headers['x-region']).toBe('eu');
    await admin.call('DELETE', `/subscriptions/${id}`);
  });

  it.each([
    ['Connection', 'close'],
    ['Keep-Alive', 'timeout=5'],
    ['Proxy-Authorization', 'Basic x'],
    ['TE', 'trailers'],
    ['Trailer', 'X-Sum'],
    ['Transfer-Encoding', 'chunked'],
    ['Upgrade', 'websocket'],
    ['Host', 'evil.example'],
    ['Content-Length', '1'],
    ['Content-Type', 'text/plain'],
    ['webhook-id', 'forged'],
    ['webhook-timestamp', '1'],
    ['webhook-signature', 'v1,forged'],
    ['User-Agent', 'me'],
    ['plant-store-hops', '0'],
    // Issue 36 (d): a browser's session, and what proxies say of a request, which a receiver behind one trusts.
    ['Cookie', 'session=stolen'],
    ['Forwarded', 'for=203.0.113.9;proto=http'],
    ['X-Forwarded-For', '203.0.113.9'],
    ['X-Forwarded-Host', 'evil.example'],
    ['x-forwarded-proto', 'http'],
    ['X-Bad Name', 'v'],
    ['X-Smuggle', 'a\r\nX-Injected: 1'],
  ])('refuses %s with 422 naming it', async (name, value) => {
    for (const [field, body] of [
      ['headers', { headers: { [name]: value } }],
      ['secretHeaders', { secretHeaders: { [name]: value } }],
    ] as const) {
      const res = await admin.call('POST', '/subscriptions', { url: `${receiver.url}/never`, ...body });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(`${field}.${name}`);
      expect(JSON.stringify(res.body)).not.toContain(value.length > 4 ? value : '\u0000');
    }
  });

  it('never sends a header stored before its name was reserved, and asks for it to be removed', async () => {
    // A filter nothing matches: only the test send reaches it.
    const s = await admin.subscribe({
      url: `${receiver.url}/older`,
      headers: { 'X-Team': 'plants' },
      filter: { tags: ['nowhere'] },
    });
    // As a subscription saved before Cookie and X-Forwarded-* were reserved holds them.
    await db.pool.query(
      `UPDATE subscriptions SET headers = headers || '{"Cookie": "session=1", "X-Forwarded-For": "10.1.2.3"}'
       WHERE id = $1`,
      [s.id],
    );
    expect((await admin.call('POST', `/subscriptions/${s.id}/test`)).body.succeeded).toBe(true);
    const [got] = receiver.on('/older');
    expect(got.headers['x-team']).toBe('plants');
    expect(got.headers.cookie).toBeUndefined();
    expect(got.headers['x-forwarded-for']).toBeUndefined();
    const kept = await admin.call('PATCH', `/subscriptions/${s.id}`, { headers: { 'X-Region': 'eu' } });
    expect(kept.status).toBe(422);
    expect(kept.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'headers.Cookie',
      'headers.X-Forwarded-For',
    ]);
    const removed = await admin.call('PATCH', `/subscriptions/${s.id}`, {
      headers: { Cookie: null, 'X-Forwarded-For': null },
    });
    expect(removed.body.headers).toEqual({ 'X-Team': 'plants' });
    await admin.call('DELETE', `/subscriptions/${s.id}`);
  });

  it('refuses too many headers, authorization beside a token, and the same rules on a change', async () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    const tooMany = await admin.call('POST', '/subscriptions', { url: `${receiver.url}/never`, headers: many });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors[0].field).toBe('headers');
    const clash = await admin.call('POST', '/subscriptions', {
      url: `${receiver.url}/never`,
      token: 'subscriber-token',
      secretHeaders: { Authorization: 'Basic dTpw' },
    });
    expect(clash.status).toBe(422);
    expect(clash.body.errors[0].field).toBe('secretHeaders.Authorization');
    const s = await admin.subscribe({ url: `${receiver.url}/never` });
    const changed = await admin.call('PATCH', `/subscriptions/${s.id}`, { headers: { Host: 'x' } });
    expect(changed.status).toBe(422);
    expect(changed.body.errors[0].field).toBe('headers.Host');
    await admin.call('DELETE', `/subscriptions/${s.id}`);
  });
});
