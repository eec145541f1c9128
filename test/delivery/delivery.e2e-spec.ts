import { Webhook } from 'standardwebhooks';
import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { waitFor } from '../../tools/harness/wait';

// Outgoing New Plant webhooks: real gateway, worker, Kafka, PostgreSQL and an HTTP receiver on loopback. On a
// database and topics of its own: its worker sends this suite's deliveries alone, its subscribers get this suite's
// plants alone, and the newest plant is one of its own.
describe('delivery: subscribers get the New Plant webhook', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  let admin: ReturnType<typeof adminClient>;
  const subscriptions: string[] = [];

  beforeAll(async () => {
    await receiver.start();
    stack = await startOwnStack('delivery', {
      DELIVERY_RETRY_SCHEDULE: '0s,300ms,300ms',
      DELIVERY_TIMEOUT_MS: '3000',
      DELIVERY_POLL_MS: '200',
      // Its receivers fail on purpose, several times in a row: the circuit breaker has a suite of its own.
      DELIVERY_CIRCUIT_FAILURES: '1000',
    });
    ({ gateway: gw, worker } = stack);
    admin = adminClient(gw.url);
  });

  afterEach(async () => {
    // Subscriptions are the suite's: remove this test's so the next test's plants are not sent to it.
    for (const id of subscriptions.splice(0)) await admin.call('DELETE', `/subscriptions/${id}`);
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  const subscribe = async (path: string, extra: Record<string, unknown> = {}) => {
    const s = await admin.subscribe({ url: receiver.url + path, ...extra });
    subscriptions.push(s.id);
    return s;
  };
  const accept = async (plant: { id: number; name: string; tag?: string; [other: string]: unknown }) => {
    const res = await e2e.postPlant(gw.url, plant);
    expect(res.status).toBe(200);
    return ((await res.json()) as { eventId: string }).eventId;
  };

  it('keeps properties beyond id, name and tag: stored, read back and delivered, and a change to them is a change', async () => {
    const sub = await subscribe('/extra');
    const id = nextId();
    const plant = { id, name: 'Pilea', tag: 'indoor', colour: 'green', care: { water: 'weekly', light: ['bright'] } };
    await accept(plant);
    const delivered = await waitFor('the delivery', () => receiver.on('/extra', id)[0]);
    expect(JSON.parse(delivered.body)).toEqual(plant);
    const read = await fetch(`${gw.url}/plants/${id}`, { headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` } });
    expect(await read.json()).toMatchObject(plant);
    await accept({ ...plant, care: { water: 'daily', light: ['bright'] } }); // only an extra property changed
    await waitFor('the change delivered', () => receiver.on('/extra', id).length === 2);
    expect(JSON.parse(receiver.on('/extra', id)[1].body).care.water).toBe('daily');
    expect(sub.id).toBeDefined();
  });

  it('sends the NewPlant body with the bearer token and a Standard Webhooks signature', async () => {
    const sub = await subscribe('/ok', { token: 'receiver-token-123' });
    const id = nextId();
    const eventId = await accept({ id, name: 'Calathea', tag: 'indoor' });
    const [req] = await waitFor('the delivery', () => (receiver.on('/ok', id).length ? receiver.on('/ok', id) : null));
    expect(JSON.parse(req.body)).toEqual({ id, name: 'Calathea', tag: 'indoor' });
    expect(req.headers.authorization).toBe('Bearer receiver-token-123');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toMatch(/^PlantStore-Webhooks\//);
    expect(req.headers['webhook-id']).toBe(eventId);
    const verified = new Webhook(sub.secret).verify(req.body, req.headers as Record<string, string>);
    expect(verified).toEqual({ id, name: 'Calathea', tag: 'indoor' });
    const listed = await admin.call('GET', `/subscriptions/${sub.id}`);
    expect(listed.body).not.toHaveProperty('secret');
    expect(listed.body).not.toHaveProperty('token');
    expect(listed.body.hasToken).toBe(true);

    // The admin API shows what was sent: the exact body and the headers, the signature verifiable, the token not.
    const [delivery] = await waitFor('the delivery recorded', async () => {
      const d = await admin.deliveriesOf(sub.id, `&plantId=${id}`);
      return d[0]?.status === 'succeeded' ? d : null;
    });
    const detail = (await admin.call('GET', `/deliveries/${delivery.id}`)).body;
    expect(detail.request.body).toBe(req.body);
    const { authorization, ...shown } = detail.request.headers;
    expect(authorization).toBe('Bearer [the subscription token, not shown]');
    for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent', 'content-type'])
      expect({ [h]: shown[h] }).toEqual({ [h]: req.headers[h] });
    expect(new Webhook(sub.secret).verify(detail.request.body, shown)).toEqual({ id, name: 'Calathea', tag: 'indoor' });
    expect(JSON.stringify(detail)).not.toContain('receiver-token-123');
    expect(detail.attemptLog[0].signature).toBe(req.headers['webhook-signature']);
  });

  it('sends a signed test New Plant to a subscription and answers what came back, storing nothing', async () => {
    let answer = 200;
    receiver.behave('/test-send', () => ({ status: answer }));
    const sub = await subscribe('/test-send', { token: 'receiver-token-456' });
    const plantsBefore = (await fetch(`${gw.url}/plants?limit=1`, {
      headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` },
    }).then((r) => r.json())) as { items: unknown[] };

    const ok = await admin.call('POST', `/subscriptions/${sub.id}/test`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ succeeded: true, response: { status: 200, error: null } });
    const [got] = receiver.on('/test-send');
    expect(got.headers.authorization).toBe('Bearer receiver-token-456');
    expect(got.headers['webhook-id']).toMatch(/^msg_test_/);
    expect(new Webhook(sub.secret).verify(got.body, got.headers as Record<string, string>)).toEqual(
      JSON.parse(ok.body.request.body),
    );
    expect(ok.body.request.headers['webhook-signature']).toBe(got.headers['webhook-signature']);
    expect(JSON.stringify(ok.body)).not.toContain('receiver-token-456');

    // The operator's own plant, and a receiver that fails: still a 200, saying what it answered.
    answer = 503;
    const failed = await admin.call('POST', `/subscriptions/${sub.id}/test`, { plant: { id: 7, name: 'Probe' } });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ succeeded: false, response: { status: 503, body: 'receiver says no' } });
    expect(JSON.parse(receiver.on('/test-send')[1].body)).toEqual({ id: 7, name: 'Probe' });

    const invalid = await admin.call('POST', `/subscriptions/${sub.id}/test`, { plant: { id: 'x' } });
    expect(invalid.status).toBe(422);
    expect((await admin.call('POST', '/subscriptions/00000000-0000-0000-0000-000000000000/test')).status).toBe(404);
    // Nothing stored, no delivery, and the audit trail has both tests.
    expect(await admin.deliveriesOf(sub.id)).toEqual([]);
    const plantsAfter = (await fetch(`${gw.url}/plants?limit=1`, {
      headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` },
    }).then((r) => r.json())) as { items: unknown[] };
    expect(plantsAfter.items).toEqual(plantsBefore.items);
    const audit = await admin.call('GET', `/audit?subscriptionId=${sub.id}`);
    expect(audit.body.items.filter((e: { action: string }) => e.action === 'subscription.tested')).toHaveLength(2);
  });

  it('bounds the test sends waiting on slow receivers: the 17th at once gets a 503 with Retry-After', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.behave('/test-slow', () => ({ status: 204, hold: held }));
    // Eight subscriptions, each within its share (TEST_SENDS_PER_SUBSCRIPTION, 2 by default), hold all 16.
    const subs = await Promise.all(Array.from({ length: 9 }, () => subscribe('/test-slow')));
    const test = (id: string) => admin.call('POST', `/subscriptions/${id}/test`);
    const waiting = subs.slice(0, 8).flatMap((sub) => [test(sub.id), test(sub.id)]);
    await waitFor('16 test sends at the receiver', () => receiver.on('/test-slow').length === 16);
    const refused = await test(subs[8].id);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.body.detail).toMatch(/16 test sends are already waiting/);
    release();
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual(Array(16).fill(200));
    expect((await test(subs[8].id)).status).toBe(200); // the room is back
  });

  // Issue 36, finding 7 ("test sends pinned"): a portal link with a slow endpoint held the gateway's 16 test sends,
  // and the operator's test of another subscription got 503. Replayed: the link's subscription gets its share and
  // 429 past it; the operator's test of another subscription is sent and answered.
  it("gives each subscription a share of the test sends: a link's slow endpoint holds up only its own", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.behave('/pinned', () => ({ status: 204, hold: held }));
    receiver.behave('/neighbour', () => ({ status: 204 }));
    const pinned = await subscribe('/pinned');
    const neighbour = await subscribe('/neighbour');
    const link = await admin.call('POST', `/subscriptions/${pinned.id}/portal-links`, {});
    const portal = adminClient(gw.url, link.body.token);

    // The attack: 16 test sends at once through the link, to its endpoint that does not answer.
    const attack = Array.from({ length: 16 }, () => portal.call('POST', `/subscriptions/${pinned.id}/test`));
    await waitFor('its share at the receiver', () => receiver.on('/pinned').length === 2);
    // The victim's view, while they wait: the operator's test of another subscription goes out and is answered.
    const victim = await admin.call('POST', `/subscriptions/${neighbour.id}/test`);
    expect(victim.status).toBe(200);
    expect(victim.body).toMatchObject({ succeeded: true, response: { status: 204 } });
    // The pinned subscription's own tests wait their turn, whoever sends them: 429, saying when to retry.
    const own = await admin.call('POST', `/subscriptions/${pinned.id}/test`);
    expect({ status: own.status, type: own.headers.get('content-type') }).toEqual({
      status: 429,
      type: expect.stringContaining('application/problem+json'),
    });
    expect(own.body).toMatchObject({ reason: 'test-send-share', subscriptionId: pinned.id });
    expect(own.body.detail).toMatch(/^2 test sends of subscription .* are already waiting for its receiver/);
    expect(Number(own.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(own.headers.get('retry-after'))).toBeLessThanOrEqual(3); // DELIVERY_TIMEOUT_MS here

    release();
    const answers = await Promise.all(attack);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    for (const refused of answers.filter((r) => r.status !== 200)) {
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Past its share, or (16 at once) past the link's rate of changes: each says which.
      expect(['test-send-share', 'portal-link-change-rate']).toContain(refused.body.reason);
    }
    expect(receiver.on('/pinned')).toHaveLength(2); // no more than its share ever went out
    expect(receiver.on('/neighbour')).toHaveLength(1);
  });

  it('retries a receiver that fails twice and succeeds on the third attempt, recording each', async () => {
    const id = nextId();
    let attempts = 0;
    receiver.behave('/flaky', (r) => ({ status: JSON.parse(r.body).id !== id || ++attempts > 2 ? 200 : 500 }));
    const sub = await subscribe('/flaky');
    await accept({ id, name: 'Flaky' });
    await waitFor('three attempts', () => receiver.on('/flaky', id).length >= 3, 20000);
    const delivery = await waitFor('the delivery to succeed', async () => {
      const d = (await admin.deliveriesOf(sub.id, `&plantId=${id}`))[0];
      return d?.status === 'succeeded' ? d : null;
    });
    const detail = (await admin.call('GET', `/deliveries/${delivery.id}`)).body;
    expect(detail.attemptLog.map((a: { status: number }) => a.status)).toEqual([500, 500, 200]);
    expect(detail.attemptLog[0].responseBody).toBe('receiver says no');
    expect(new Set(receiver.on('/flaky', id).map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('disables the subscription when the receiver answers 410 Gone', async () => {
    const id = nextId();
    receiver.behave('/gone', (r) => ({ status: JSON.parse(r.body).id === id ? 410 : 200 }));
    const sub = await subscribe('/gone');
    await accept({ id, name: 'Gone' });
    const s = await waitFor('the subscription disabled', async () => {
      const body = (await admin.call('GET', `/subscriptions/${sub.id}`)).body;
      return body.enabled === false ? body : null;
    });
    expect(s.disabledReason).toMatch(/410/);
    expect(receiver.on('/gone', id)).toHaveLength(1);
    // Not an admin's change, but one an operator looks for: in the audit trail, by the worker.
    const trail = (await admin.call('GET', `/audit?subscriptionId=${sub.id}`)).body.items;
    expect(trail[0]).toMatchObject({ actor: 'worker', action: 'subscription.disabled' });
    expect(trail[0].details.reason).toMatch(/410/);
  });

  it('marks a delivery failed after the last attempt, lists it, and a manual retry delivers it', async () => {
    let healthy = false;
    const id = nextId();
    receiver.behave('/down', (r) => ({ status: healthy || JSON.parse(r.body).id !== id ? 200 : 503 }));
    const sub = await subscribe('/down');
    await accept({ id, name: 'Down' });
    const failed = await waitFor(
      'the failed delivery',
      async () => (await admin.deliveriesOf(sub.id, `&status=failed&plantId=${id}`))[0],
      20000,
    );
    expect(receiver.on('/down', id)).toHaveLength(3);
    healthy = true;
    expect((await admin.call('POST', `/deliveries/${failed.id}/retry`)).status).toBe(202);
    await waitFor(
      'the retried delivery to succeed',
      async () => (await admin.call('GET', `/deliveries/${failed.id}`)).body.status === 'succeeded',
    );
    expect((await admin.call('POST', `/deliveries/${failed.id}/retry`)).status).toBe(409);
  });

  it('re-queues every failed delivery since a time (recover)', async () => {
    let healthy = false;
    const ids = [nextId(), nextId()];
    receiver.behave('/recover', (r) => ({ status: healthy || !ids.includes(JSON.parse(r.body).id) ? 200 : 500 }));
    const sub = await subscribe('/recover');
    const since = new Date(Date.now() - 1000).toISOString();
    await accept({ id: ids[0], name: 'R1' });
    await accept({ id: ids[1], name: 'R2' });
    const failedOf = async (id: number) => (await admin.deliveriesOf(sub.id, `&status=failed&plantId=${id}`)).length;
    await waitFor('both failed', async () => (await failedOf(ids[0])) + (await failedOf(ids[1])) === 2, 20000);
    healthy = true;
    const res = await admin.call('POST', `/subscriptions/${sub.id}/recover?since=${encodeURIComponent(since)}`);
    expect(res.status).toBe(202);
    expect(res.body.requeued).toBeGreaterThanOrEqual(2);
    await waitFor('both delivered', async () => {
      const done = await Promise.all(
        ids.map(async (id) => (await admin.deliveriesOf(sub.id, `&status=succeeded&plantId=${id}`)).length),
      );
      return done.every((n) => n === 1);
    });
  });

  it('lists deliveries in a time range, retries every failed one in a filter, and the overview counts them', async () => {
    let healthy = false;
    const ids = [nextId(), nextId()];
    receiver.behave('/bulk', () => ({ status: healthy ? 200 : 500 }));
    const sub = await subscribe('/bulk');
    const before = new Date(Date.now() - 1000).toISOString();
    await accept({ id: ids[0], name: 'B1' });
    await accept({ id: ids[1], name: 'B2' });
    await waitFor('both failed', async () => (await admin.deliveriesOf(sub.id, '&status=failed')).length === 2, 20000);
    const q = (extra: string) => admin.deliveriesOf(sub.id, extra);
    const after = new Date(Date.now() + 1000).toISOString();
    expect(await q(`&since=${encodeURIComponent(before)}&until=${encodeURIComponent(after)}`)).toHaveLength(2);
    expect(await q(`&until=${encodeURIComponent(before)}`)).toHaveLength(0);
    expect(await q(`&since=${encodeURIComponent(after)}`)).toHaveLength(0);
    const badTime = await admin.call('GET', `/deliveries?since=yesterday`);
    expect(badTime.status).toBe(422);
    expect(badTime.body.errors).toEqual([{ field: 'since', message: expect.any(String) }]);

    expect((await admin.call('POST', '/deliveries/retry', {})).status).toBe(422); // not everything by accident
    healthy = true;
    const res = await admin.call('POST', '/deliveries/retry', { subscriptionId: sub.id, since: before });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ requeued: 2 });
    await waitFor('both delivered', async () => (await q('&status=succeeded')).length === 2);
    const audit = await admin.call('GET', `/audit?subscriptionId=${sub.id}`);
    expect(audit.body.items[0]).toMatchObject({ action: 'deliveries.retried', details: { requeued: 2 } });

    const overview = await admin.call('GET', '/overview');
    expect(overview.status).toBe(200);
    expect(overview.body.lastHour).toHaveLength(60);
    const sum = (k: 'accepted' | 'delivered') =>
      overview.body.lastHour.reduce((n: number, m: Record<string, number>) => n + m[k], 0);
    expect(sum('accepted')).toBeGreaterThanOrEqual(2);
    expect(sum('delivered')).toBeGreaterThanOrEqual(2);
    expect(overview.body.deliveries.succeeded).toBeGreaterThanOrEqual(2);
    expect(overview.body).toHaveProperty('deadLetters');
    expect(overview.body.events.stored).toBeGreaterThanOrEqual(2);
    // The broker's answer: the workers' group has committed what they stored (or is about to).
    expect(overview.body.events.consumerLag).toEqual(expect.any(Number));
    expect(overview.body.events.consumerLag).toBeGreaterThanOrEqual(0);
  });

  it('sends one plant’s deliveries in event order with a slow receiver, while other plants do not wait', async () => {
    // A's first delivery is answered only once B's has arrived: B does not wait behind it, A's later ones do. (A
    // delay of 400 ms for each of A's made B's come first only while a plant took less than that to be stored.)
    let release!: () => void;
    const bArrived = new Promise<void>((r) => (release = r));
    receiver.behave('/slow', (r) => {
      const { name } = JSON.parse(r.body);
      if (name === 'B1') release();
      return { status: 200, ...(name === 'A1' ? { hold: bArrived } : {}) };
    });
    await subscribe('/slow');
    const a = nextId();
    const b = nextId();
    for (const n of [1, 2, 3, 4]) {
      const eventId = await accept({ id: a, name: `A${n}` });
      // Wait until stored, so each update is its own event (one batch would keep only the latest).
      await waitFor(`A${n} stored`, async () => {
        const res = await fetch(`${gw.url}/plants/${a}`, { headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` } });
        return res.ok && (await res.json()).lastEventId === eventId;
      });
    }
    await accept({ id: b, name: 'B1' });
    await waitFor('all five received', () => receiver.on('/slow', a, b).length === 5, 20000);
    const names = receiver.on('/slow', a, b).map((r) => JSON.parse(r.body).name);
    expect(names.filter((n) => n.startsWith('A'))).toEqual(['A1', 'A2', 'A3', 'A4']);
    expect(names.indexOf('B1')).toBeLessThan(names.indexOf('A2'));
  });

  it('signs with both secrets during a rotation', async () => {
    const sub = await subscribe('/rotated');
    const rotated = await admin.call('POST', `/subscriptions/${sub.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(sub.secret);
    const id = nextId();
    await accept({ id, name: 'Rotated' });
    const [req] = await waitFor('the delivery', () =>
      receiver.on('/rotated', id).length ? receiver.on('/rotated', id) : null,
    );
    expect((req.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    for (const secret of [sub.secret, rotated.body.secret]) {
      expect(() => new Webhook(secret).verify(req.body, req.headers as Record<string, string>)).not.toThrow();
    }
  });

  it('refuses private and metadata URLs unless private networks are allowed', async () => {
    const strict = await e2e.startGateway({ ...stack.env, DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false' });
    try {
      const strictAdmin = adminClient(strict.url);
      for (const url of [
        'http://127.0.0.1:8080/hook',
        'http://169.254.169.254/latest',
        'http://[::1]/x',
        'http://10.0.0.1/',
      ]) {
        const res = await strictAdmin.call('POST', '/subscriptions', { url });
        expect(res.status).toBe(422);
        expect(res.body.errors[0].field).toBe('url');
      }
    } finally {
      await strict.close();
    }
    const allowed = await admin.call('POST', '/subscriptions', { url: 'http://127.0.0.1:8080/hook' });
    expect(allowed.status).toBe(201);
    subscriptions.push(allowed.body.id);
  });

  it('keeps the delivery history of a deleted subscription: listed, inspectable, not sent again', async () => {
    const id = nextId();
    const sub = await subscribe('/deleted');
    await accept({ id, name: 'Evidence' });
    await waitFor('the delivery', () => receiver.on('/deleted', id)[0]);
    const [delivered] = await waitFor('it succeeded', async () => {
      const items = await admin.deliveriesOf(sub.id);
      return items.length === 1 && items[0].status === 'succeeded' ? items : null;
    });
    expect((await admin.call('DELETE', `/subscriptions/${sub.id}`)).status).toBe(204);
    expect((await admin.call('GET', `/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await admin.call('DELETE', `/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await admin.deliveriesOf(sub.id)).map((d) => d.id)).toEqual([delivered.id]);
    const detail = (await admin.call('GET', `/deliveries/${delivered.id}`)).body;
    expect(detail.attemptLog).toHaveLength(1);
    await accept({ id: nextId(), name: 'After' });
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.on('/deleted')).toHaveLength(1); // nothing more goes to it
  });

  it('accepts bodiless admin calls that still send Content-Type: application/json', async () => {
    const sub = await subscribe('/bodiless');
    const headers = { authorization: `Bearer ${e2e.ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expect((await fetch(`${gw.url}/subscriptions/${sub.id}/rotate-secret`, { method: 'POST', headers })).status).toBe(
      200,
    );
    expect((await fetch(`${gw.url}/subscriptions/${sub.id}`, { method: 'DELETE', headers })).status).toBe(204);
    expect((await admin.call('GET', `/subscriptions/${sub.id}`)).status).toBe(404);
  });

  it('keeps admin and webhook tokens apart, and validates admin bodies', async () => {
    const asWebhook = await fetch(`${gw.url}/subscriptions`, {
      headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` },
    });
    expect(asWebhook.status).toBe(401);
    expect(((await asWebhook.json()) as { detail: string }).detail).toMatch(
      /not an admin token: this route needs one from ADMIN_TOKENS/,
    );
    const asAdmin = await e2e.postPlant(
      gw.url,
      { id: nextId(), name: 'x' },
      { authorization: `Bearer ${e2e.ADMIN_TOKEN}` },
    );
    expect(asAdmin.status).toBe(401);
    expect(((await asAdmin.json()) as { detail: string }).detail).toMatch(
      /not a webhook token: this route needs one from WEBHOOK_TOKENS/,
    );
    // The read API over the store takes either kind of token: senders read back, operators look plants up.
    for (const t of [e2e.WEBHOOK_TOKEN, e2e.ADMIN_TOKEN])
      expect((await fetch(`${gw.url}/plants?limit=1`, { headers: { authorization: `Bearer ${t}` } })).status).toBe(200);
    const neither = await fetch(`${gw.url}/plants?limit=1`, { headers: { authorization: 'Bearer nobody' } });
    expect(neither.status).toBe(401);
    expect(((await neither.json()) as { detail: string }).detail).toMatch(
      /neither a webhook token .* nor an admin token/,
    );
    const bad = await admin.call('POST', '/subscriptions', { url: 'ftp://x', colour: 'red' });
    expect(bad.status).toBe(422);
    expect((await admin.call('GET', '/subscriptions/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await admin.call('GET', '/deliveries?status=lost')).status).toBe(422);
  });

  it.each([
    ['GET', '/subscriptions/not-a-uuid', 'id'],
    ['PATCH', '/subscriptions/urn:uuid:00000000-0000-0000-0000-000000000000', 'id'],
    ['POST', '/deliveries/42/retry', 'id'],
    ['GET', '/deliveries?plantId=1e3', 'plantId'],
    ['GET', '/deliveries?plantId=9007199254740992', 'plantId'],
    ['GET', '/deliveries?subscriptionId=x', 'subscriptionId'],
    ['GET', '/deliveries?limit=0', 'limit'],
    ['GET', '/deliveries?cursor=forged', 'cursor'],
  ])('checks %s %s against the parameters the document declares (422 naming %s)', async (method, path, field) => {
    const res = await admin.call(method, path, method === 'PATCH' ? { enabled: true } : undefined);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field, message: expect.any(String) }]);
  });

  it.each(['0', '-1', '1.5', '$1', '2026-13-01T00:00:00Z', 'yesterday'])(
    'refuses recover?since=%p with 422 naming since',
    async (since) => {
      const sub = await subscribe('/recover-since');
      const res = await admin.call('POST', `/subscriptions/${sub.id}/recover?since=${encodeURIComponent(since)}`);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'since', message: expect.stringMatching(/date-time/) }]);
    },
  );

  it('reports delivery metrics', async () => {
    const m = await (await fetch(`${worker.url}/metrics`)).text();
    expect(m).toMatch(/plant_store_deliveries_total\{[^}]*outcome="succeeded"/);
    expect(m).toMatch(/plant_store_delivery_latency_seconds_bucket/);
    expect(m).toMatch(/plant_store_deliveries_pending/);
  });
});
