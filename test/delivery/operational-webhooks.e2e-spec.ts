import { Producer } from 'kafkajs';
import { Webhook } from 'standardwebhooks';
import { OPERATIONAL_EVENT_TYPES, PLANT_CREATED_TOPIC } from '@app/contracts';
import { adminClient } from '../../tools/harness/admin';
import { Received, Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

interface OperationalBody {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

// Operational webhooks: an operator's receiver subscribed to Plant Store's own events gets them signed, retried
// and listed like any delivery, when a subscriber answers 410, when a delivery runs out of attempts and when a
// poison record is dead-lettered. Real gateway, worker, Kafka, PostgreSQL (a database of this suite's own: the
// events are about every subscription in it) and HTTP receivers on loopback.
describe('operational webhooks: subscription.disabled, delivery.exhausted, dead_letter.created', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  let producer: Producer;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  const firstId = nextId();
  let admin: ReturnType<typeof adminClient>;
  let ops: { id: string; secret: string };
  let deadLettersOnly: { id: string; secret: string };
  const sharedDatabase = process.env.DATABASE_URL;

  beforeAll(async () => {
    await receiver.start();
    db = await e2e.scratchDatabase('opwebhooks');
    // Every part of this suite on its own database, the gateway's set-up check included.
    process.env.DATABASE_URL = db.url;
    const env = e2e.baseEnv({
      DATABASE_URL: db.url,
      DELIVERY_RETRY_SCHEDULE: '0s,300ms,300ms',
      DELIVERY_TIMEOUT_MS: '3000',
      DELIVERY_POLL_MS: '200',
      // Failing deliveries run out of attempts here, rather than wait behind an open circuit.
      DELIVERY_CIRCUIT_FAILURES: '1000',
    });
    worker = await e2e.startWorker(env);
    gw = await e2e.startGateway(env);
    admin = adminClient(gw.url);
    producer = e2e.testKafka().producer();
    await producer.connect();
    // A new worker group copies every dead letter earlier runs left in the DLQ: let it finish before anyone
    // subscribes, so that the operators below hear of this suite's dead letter only.
    let last = -1;
    let stableSince = Date.now();
    await waitFor(
      'the dead-letter archive to catch up',
      async () => {
        const n = Number((await db.pool.query('SELECT count(*) FROM dead_letters')).rows[0].count);
        if (n !== last) [last, stableSince] = [n, Date.now()];
        return Date.now() - stableSince > 3000;
      },
      180000,
      500,
    );
    // The operator's receiver fails the first attempt of each event: operational deliveries are retried too.
    const seen = new Set<string>();
    receiver.behave('/ops', (req) => {
      const first = !seen.has(String(req.headers['webhook-id']));
      seen.add(String(req.headers['webhook-id']));
      return { status: first ? 500 : 204 };
    });
    receiver.behave('/gone', () => ({ status: 410 }));
    receiver.behave('/down', () => ({ status: 503 }));
    ops = await admin.subscribe({ url: `${receiver.url}/ops`, kind: 'operational', description: 'on call' });
    deadLettersOnly = await admin.subscribe({
      url: `${receiver.url}/dead-letters-only`,
      kind: 'operational',
      eventTypes: ['dead_letter.created'],
    });
  }, 240000);

  afterAll(async () => {
    await producer?.disconnect();
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
    process.env.DATABASE_URL = sharedDatabase;
  });

  /** A plant subscriber that receives this suite's plants only (a new group replays what earlier runs left). */
  const plantSubscriber = (path: string) =>
    admin.subscribe({ url: receiver.url + path, filter: { plantIds: { min: firstId, max: firstId + 999 } } });
  const events = (path: string, type: string, match: (data: Record<string, unknown>) => boolean) =>
    receiver
      .on(path)
      .map((r) => ({ r, body: JSON.parse(r.body) as OperationalBody }))
      .filter(({ body }) => body.type === type && match(body.data));
  /** The first request of the event that matches, once it was received twice (the first attempt gets 500). */
  const operational = (type: string, match: (data: Record<string, unknown>) => boolean) =>
    waitFor(`${type} at the operator's receiver`, () => {
      const got = events('/ops', type, match);
      return got.length >= 2 ? got : null;
    });
  const verified = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as OperationalBody;

  it('sends subscription.disabled, signed, when a subscriber answers 410, retried and listed like any delivery', async () => {
    const gone = await plantSubscriber('/gone');
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: 'Fern' })).status).toBe(200);
    const [first, second] = await operational('subscription.disabled', (d) => d.subscriptionId === gone.id);
    expect(first.r.headers['webhook-id']).toBe(second.r.headers['webhook-id']);
    const body = verified(ops.secret, second.r);
    expect(body).toEqual({
      type: 'subscription.disabled',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        subscriptionId: gone.id,
        reason: expect.stringMatching(/410/),
        disabledAt: expect.stringMatching(/Z$/),
      },
    });
    expect((await admin.call('GET', `/subscriptions/${gone.id}`)).body).toMatchObject({ enabled: false });

    const listed = await waitFor('the operational delivery succeeded', async () => {
      const items = (await admin.call('GET', `/deliveries?subscriptionId=${ops.id}&status=succeeded`)).body.items;
      return items.find((d: { eventId: string }) => d.eventId === second.r.headers['webhook-id']);
    });
    expect(listed).toMatchObject({ eventType: 'subscription.disabled', plantId: null, attempts: 2 });
    const detail = (await admin.call('GET', `/deliveries/${listed.id}`)).body;
    expect(detail.attemptLog.map((a: { status: number }) => a.status)).toEqual([500, 204]);
    expect(JSON.parse(detail.request.body)).toEqual(body);
  });

  it('sends delivery.exhausted when a delivery runs out of attempts', async () => {
    const down = await plantSubscriber('/down');
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: 'Cactus' })).status).toBe(200);
    const [, got] = await operational('delivery.exhausted', (d) => d.subscriptionId === down.id);
    const data = verified(ops.secret, got.r).data;
    const [failed] = await admin.deliveriesOf(down.id, '&status=failed');
    expect(data).toEqual({
      deliveryId: failed.id,
      subscriptionId: down.id,
      eventId: expect.any(String),
      plantId: id,
      attempts: 3,
      lastAttempt: { attemptedAt: expect.stringMatching(/Z$/), status: 503, error: null },
      heldBack: 0,
    });
    expect(receiver.on('/down', id)).toHaveLength(3);
  });

  it('tells one delivery.exhausted per failing subscription and minute, and counts what it held back', async () => {
    // Issue #36: a portal link replaying a failing endpoint paged every operator once per delivery.
    const failing = await plantSubscriber('/down');
    const told = () =>
      new Set(
        events('/ops', 'delivery.exhausted', (d) => d.subscriptionId === failing.id).map(
          ({ r }) => r.headers['webhook-id'],
        ),
      ).size;
    for (let i = 0; i < 5; i++) expect((await e2e.postPlant(gw.url, { id: nextId(), name: 'Aloe' })).status).toBe(200);
    await waitFor(
      'five failed for good',
      async () => (await admin.deliveriesOf(failing.id, '&status=failed')).length === 5,
    );
    await waitFor('the operator told', () => told() === 1);
    await new Promise((r) => setTimeout(r, 1500)); // any second notice would be on its way by now
    expect(told()).toBe(1);
    // The minute is over (moved back here, not waited for): the next one is told, with the four held back.
    await db.pool.query(`UPDATE operational_notices SET window_ends = now() WHERE subscription_id = $1`, [failing.id]);
    const last = nextId();
    expect((await e2e.postPlant(gw.url, { id: last, name: 'Agave' })).status).toBe(200);
    const [, got] = await operational(
      'delivery.exhausted',
      (d) => d.subscriptionId === failing.id && d.plantId === last,
    );
    expect(verified(ops.secret, got.r).data).toMatchObject({ plantId: last, heldBack: 4 });
    expect(told()).toBe(2);
  });

  it('sends dead_letter.created when a poison record is dead-lettered, to the operators that take that type', async () => {
    const key = `poison-${nextId()}`;
    await producer.send({ topic: PLANT_CREATED_TOPIC, messages: [{ key, value: 'this is not json' }] });
    const [, got] = await operational('dead_letter.created', (d) => d.key === key);
    expect(verified(ops.secret, got.r).data).toEqual({
      deadLetterId: expect.stringMatching(/^\d+$/),
      reason: expect.stringMatching(/JSON/),
      deadLetteredAt: expect.stringMatching(/Z$/),
      origin: { topic: PLANT_CREATED_TOPIC, partition: expect.any(Number), offset: expect.stringMatching(/^\d+$/) },
      key,
      truncated: false,
    });
    const only = await waitFor('the dead letter at the dead-letters-only operator', () =>
      receiver.on('/dead-letters-only').find((r) => JSON.parse(r.body).data.key === key),
    );
    expect(verified(deadLettersOnly.secret, only).type).toBe('dead_letter.created');
  });

  it('keeps the two apart: operators get no plant, plant subscribers no operational event; an operator its types only', async () => {
    const opsTypes = receiver.on('/ops').map((r) => JSON.parse(r.body).type);
    expect(opsTypes.length).toBeGreaterThan(0);
    expect(opsTypes.every((t) => (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(t))).toBe(true);
    expect(receiver.on('/dead-letters-only').every((r) => JSON.parse(r.body).type === 'dead_letter.created')).toBe(
      true,
    );
    for (const path of ['/gone', '/down']) {
      const bodies = receiver.on(path).map((r) => JSON.parse(r.body));
      expect(bodies.length).toBeGreaterThan(0);
      expect(bodies.every((b) => typeof b.id === 'number' && b.type === undefined)).toBe(true);
    }
    // A plant posted now goes to the plant subscribers (the one that answers 503 included), not to the operators.
    const plants = await plantSubscriber('/plants');
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: 'Monstera' })).status).toBe(200);
    await waitFor('the plant delivered', () => receiver.on('/plants', id)[0] && receiver.on('/down', id)[0]);
    const paths = new Set(receiver.received.filter((r) => r.body.includes('Monstera')).map((r) => r.path));
    expect([...paths].sort()).toEqual(['/down', '/plants']);
    for (const operator of [ops.id, deadLettersOnly.id])
      expect((await admin.deliveriesOf(operator)).every((d) => (d.plantId as number | null) === null)).toBe(true);
    await admin.call('DELETE', `/subscriptions/${plants.id}`);
  });

  it('refuses settings of the other kind, and test-sends an example event to an operator', async () => {
    const wrong = await admin.call('POST', '/subscriptions', {
      url: `${receiver.url}/x`,
      kind: 'operational',
      filter: { tags: ['indoor'] },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([expect.objectContaining({ field: 'filter' })]);
    const plants = await admin.call('POST', '/subscriptions', { url: `${receiver.url}/x`, eventTypes: ['x'] });
    expect(plants.status).toBe(422);
    const typed = await admin.call('PATCH', `/subscriptions/${ops.id}`, { filter: { tags: ['a'] } });
    expect(typed.status).toBe(422);

    const test = await admin.call('POST', `/subscriptions/${deadLettersOnly.id}/test`, {});
    expect(test.status).toBe(200);
    const sent = JSON.parse(test.body.request.body);
    expect(sent).toMatchObject({ type: 'dead_letter.created', data: { deadLetterId: expect.any(String) } });
    // The test send's request (msg_test_…), not a dead letter of another suite's that came meanwhile.
    const tests = receiver
      .on('/dead-letters-only')
      .filter((r) => String(r.headers['webhook-id']).startsWith('msg_test_'));
    expect(verified(deadLettersOnly.secret, tests.at(-1)!)).toEqual(sent);
    const plant = await admin.call('POST', `/subscriptions/${ops.id}/test`, { plant: { id: 1, name: 'x' } });
    expect(plant.status).toBe(422);
  });
});
