import { ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { adminClient } from '../../tools/harness/admin';
import { exitOf, spawnBuiltApp } from '../../tools/harness/processes';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// Issue 28, part 5: a subscriber asks for the current state of every plant it would receive, and gets it as New
// Plant webhooks in plant-id order, marked, paced, resumable and cancellable, never older than a live one. Each
// part in a database of its own (a backfill sends every stored plant its filter lets through).
const PLANTS = 30;
/** Short, so that queued deliveries settle quickly (queue-backfill): no ingest statement may run longer. */
const fastEnv = (db: e2e.ScratchDatabase) =>
  e2e.baseEnv({
    DATABASE_URL: db.url,
    DATABASE_STATEMENT_TIMEOUT_MS: '2000',
    DATABASE_QUERY_TIMEOUT_MS: '4000',
    DELIVERY_TIMEOUT_MS: '2000',
    DELIVERY_POLL_MS: '200',
    // One request at a time per subscriber: the order they arrive in is the order they were sent in.
    DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '1',
  });

type Admin = ReturnType<typeof adminClient>;
const tagOf = (i: number) => (i % 2 === 0 ? 'indoor' : 'outdoor');

/** PLANTS plants stored (no subscription yet: nothing delivered), ids `base`…; resolves once all are stored. */
async function storePlants(gw: e2e.RunningGateway, db: e2e.ScratchDatabase, base: number) {
  for (let i = 0; i < PLANTS; i++)
    expect((await e2e.postPlant(gw.url, { id: base + i, name: `Plant ${i}`, tag: tagOf(i) })).status).toBe(200);
  await waitFor(
    'the plants stored',
    async () =>
      Number(
        (await db.pool.query('SELECT count(*) FROM plants WHERE id BETWEEN $1 AND $2', [base, base + PLANTS - 1]))
          .rows[0].count,
      ) === PLANTS,
    30_000,
  );
}

const finished = (admin: Admin, sub: string, id: string) =>
  waitFor(
    `backfill ${id} finished`,
    async () => {
      const b = (await admin.call('GET', `/subscriptions/${sub}/backfills/${id}`)).body;
      return b.state === 'completed' || b.state === 'cancelled' ? b : null;
    },
    60_000,
    200,
  );

const bodies = (receiver: Receiver, path: string) =>
  receiver.on(path).map((r) => ({ ...(JSON.parse(r.body) as { id: number; name: string }), headers: r.headers }));

describe('backfill', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const base = e2e.plantIds()();
  let admin: Admin;
  let storedAt: string;
  const range = { plantIds: { min: base, max: base + PLANTS - 1 } };

  beforeAll(async () => {
    db = await e2e.scratchDatabase('backfill');
    await receiver.start();
    const env = fastEnv(db);
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    worker = await e2e.startWorker(env); // first: its setup migrates the new database
    gw = await e2e.startGateway(env);
    admin = adminClient(gw.url);
    await storePlants(gw, db, base);
    storedAt = new Date().toISOString();
  });

  afterAll(async () => {
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
  });

  it('sends every plant the filter lets through, in plant-id order, marked, signed, with progress', async () => {
    const sub = await admin.subscribe({ url: `${receiver.url}/all`, filter: { tags: ['indoor'], ...range } });
    const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 100 });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ state: 'running', total: PLANTS / 2, ratePerSecond: 100, since: null });
    const again = await admin.call('POST', `/subscriptions/${sub.id}/backfills`);
    expect(again.status).toBe(409); // one at a time
    expect(again.headers.get('content-type')).toMatch(/problem\+json/);

    const done = await finished(admin, sub.id, started.body.id);
    expect(done).toMatchObject({ state: 'completed', total: 15, queued: 15, sent: 15, pending: 0, superseded: 0 });
    const got = bodies(receiver, '/all');
    const expected = Array.from({ length: PLANTS }, (_, i) => base + i).filter((id) => tagOf(id - base) === 'indoor');
    expect(got.map((b) => b.id)).toEqual(expected); // in plant-id order, each once, only the filter's
    for (const b of got) expect(b.headers['plant-store-backfill']).toBe(started.body.id);
    const r = receiver.on('/all')[0];
    expect(new Webhook(sub.secret).verify(r.body, r.headers as Record<string, string>)).toMatchObject({ id: base });
    expect(new Set(receiver.on('/all').map((x) => x.headers['webhook-id'])).size).toBe(15);
    const listed = await admin.call('GET', `/subscriptions/${sub.id}/backfills`);
    expect(listed.body.map((b: { id: string }) => b.id)).toEqual([started.body.id]);
    const [delivery] = await admin.deliveriesOf(sub.id, `&plantId=${base}`);
    const detail = await admin.call('GET', `/deliveries/${delivery.id}`);
    expect(detail.body.request.headers['plant-store-backfill']).toBe(started.body.id);
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  });

  it('sends only the plants changed since a time, as they are now', async () => {
    const changed = [base + 3, base + 10, base + 21];
    for (const id of changed) expect((await e2e.postPlant(gw.url, { id, name: `Renamed ${id}` })).status).toBe(200);
    await waitFor('the changes stored', async () => {
      const { rows } = await db.pool.query("SELECT count(*) FROM plants WHERE name LIKE 'Renamed%'");
      return Number(rows[0].count) === changed.length;
    });
    const sub = await admin.subscribe({ url: `${receiver.url}/since`, filter: range });
    const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { since: storedAt });
    expect(started.body.total).toBe(3);
    await finished(admin, sub.id, started.body.id);
    expect(bodies(receiver, '/since').map((b) => [b.id, b.name])).toEqual(changed.map((id) => [id, `Renamed ${id}`]));
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  });

  it('stops when cancelled: nothing more is sent', async () => {
    const sub = await admin.subscribe({ url: `${receiver.url}/cancel`, filter: range });
    const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 2 });
    await waitFor('the first ones', () => receiver.on('/cancel').length >= 2, 30_000);
    const cancelled = await admin.call('POST', `/subscriptions/${sub.id}/backfills/${started.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe('cancelling');
    const done = await finished(admin, sub.id, started.body.id);
    expect(done.state).toBe('cancelled');
    const sent = receiver.on('/cancel').length;
    await new Promise((r) => setTimeout(r, 3000)); // what was queued would have come due by now
    expect(receiver.on('/cancel').length).toBe(sent);
    expect(sent).toBeLessThan(PLANTS / 2);
    const { rows } = await db.pool.query(
      "SELECT count(*) FROM deliveries WHERE backfill_id = $1 AND status = 'pending'",
      [started.body.id],
    );
    expect(Number(rows[0].count)).toBe(0); // nothing left to hold a later live delivery back
    const twice = await admin.call('POST', `/subscriptions/${sub.id}/backfills/${started.body.id}/cancel`);
    expect(twice.status).toBe(409);
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  });

  it('never delivers a backfilled version after, or instead of, a newer live one of the same plant', async () => {
    const sub = await admin.subscribe({ url: `${receiver.url}/live`, filter: range });
    const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 10 });
    // Updates while it runs: of plants it has sent, is about to send (queued, not yet due) and has not reached.
    await waitFor('the backfill under way', () => receiver.on('/live').length >= 3, 30_000);
    const updated = [base + 1, base + 8, base + 12, base + 16, base + 25, base + 29];
    for (const id of updated) expect((await e2e.postPlant(gw.url, { id, name: `Live ${id}` })).status).toBe(200);
    const done = await finished(admin, sub.id, started.body.id);
    await waitFor('every live update delivered', () =>
      updated.every((id) => bodies(receiver, '/live').some((b) => b.id === id && b.name === `Live ${id}`)),
    );
    const got = bodies(receiver, '/live');
    for (const id of updated) {
      const names = got.filter((b) => b.id === id).map((b) => b.name);
      // Whatever came before it, nothing older after the live version (a plant the backfill reached after its
      // update is sent as it is now: the live version again).
      const after = names.slice(names.indexOf(`Live ${id}`));
      expect(after).toEqual(after.map(() => `Live ${id}`));
    }
    // Every other plant once, from the backfill.
    for (let i = 0; i < PLANTS; i++)
      if (!updated.includes(base + i)) expect(got.filter((b) => b.id === base + i)).toHaveLength(1);
    expect(done.state).toBe('completed');
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  });

  it("gives another subscriber's backfill its turn while four slow ones hold the slots, and none to a disabled one", async () => {
    // Issue 36, part 3: a worker runs 4 backfills at a time. Four portal links each started one at 1/s (or disabled
    // their subscription): a fifth subscriber's backfill sat running with nothing sent. Now every backfill is held
    // for a slice at most, and a disabled subscription's backfill gives its slot back.
    const hogs: { sub: { id: string }; backfill: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const sub = await admin.subscribe({ url: `${receiver.url}/hog${i}`, filter: range });
      const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 1 });
      expect(started.status).toBe(201);
      hogs.push({ sub, backfill: started.body.id });
    }
    await waitFor('the four under way', () => hogs.every((_, i) => receiver.on(`/hog${i}`).length >= 1), 30_000);
    const state = async (h: (typeof hogs)[number]) =>
      (await admin.call('GET', `/subscriptions/${h.sub.id}/backfills/${h.backfill}`)).body;

    const sub = await admin.subscribe({ url: `${receiver.url}/fifth`, filter: range });
    const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 100 });
    const done = await finished(admin, sub.id, started.body.id);
    expect(done).toMatchObject({ state: 'completed', sent: PLANTS });
    expect(receiver.on('/fifth')).toHaveLength(PLANTS);
    // It did not wait for one of the four to end (each takes 30 s at 1/s).
    for (const h of hogs) expect((await state(h)).state).toBe('running');

    // Disabled: no worker holds it (its lease is handed back), and it goes on where it stopped once enabled.
    for (const h of hogs.slice(0, 2))
      expect((await admin.call('PATCH', `/subscriptions/${h.sub.id}`, { enabled: false })).status).toBe(200);
    const held = async (h: (typeof hogs)[number]) =>
      (await db.pool.query('SELECT leased_until IS NOT NULL AS held FROM backfills WHERE id = $1', [h.backfill]))
        .rows[0].held as boolean;
    await waitFor('the disabled ones handed back', async () => !(await held(hogs[0])) && !(await held(hogs[1])));
    const before = await state(hogs[0]);
    expect(before.state).toBe('running');
    expect((await admin.call('PATCH', `/subscriptions/${hogs[0].sub.id}`, { enabled: true })).status).toBe(200);
    await waitFor('the enabled one queueing again', async () => (await state(hogs[0])).queued > before.queued, 30_000);
    for (const h of hogs) await admin.call('DELETE', `/subscriptions/${h.sub.id}`);
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  }, 90_000);

  it('refuses a bad request with 422 naming the field, and an unknown subscription with 404', async () => {
    const sub = await admin.subscribe({ url: `${receiver.url}/never`, filter: range });
    const bad = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 0 });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('ratePerSecond');
    const none = await admin.call('POST', '/subscriptions/00000000-0000-4000-8000-000000000000/backfills');
    expect(none.status).toBe(404);
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  });
});

describe('backfill across a worker crash', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let child: ChildProcess | null = null;
  let rescuer: e2e.RunningWorker | null = null;
  const receiver = new Receiver();
  const base = e2e.plantIds()();

  beforeAll(async () => {
    db = await e2e.scratchDatabase('backfill_crash');
    await receiver.start();
  });

  afterAll(async () => {
    child?.kill('SIGKILL');
    await rescuer?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
  });

  it('goes on from its cursor after the worker running it is killed, losing nothing', async () => {
    const env = fastEnv(db);
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    const spawned = spawnBuiltApp('worker', { ...env, WORKER_METRICS_PORT: '0' });
    child = spawned.child;
    gw = await e2e.startGateway(env); // it waits for the worker to migrate the new database
    const admin = adminClient(gw.url);
    await storePlants(gw, db, base).catch((err) => {
      throw new Error(`${err.message}\nworker output:\n${spawned.output.join('').slice(-4000)}`);
    });
    const sub = await admin.subscribe({
      url: `${receiver.url}/crash`,
      filter: { plantIds: { min: base, max: base + PLANTS - 1 } },
    });
    const started = await admin.call('POST', `/subscriptions/${sub.id}/backfills`, { ratePerSecond: 5 });
    await waitFor('part of it sent', () => receiver.on('/crash').length >= 5, 30_000);
    child.kill('SIGKILL');
    await exitOf(child);
    child = null;
    const before = receiver.on('/crash').length;
    expect(before).toBeLessThan(PLANTS);

    rescuer = await e2e.startWorker({ ...env, WORKER_GROUP_ID: `${env.WORKER_GROUP_ID}-rescuer` });
    const done = await finished(admin, sub.id, started.body.id);
    expect(done).toMatchObject({ state: 'completed', total: PLANTS, queued: PLANTS, sent: PLANTS });
    const ids = bodies(receiver, '/crash').map((b) => b.id);
    // Every plant, at least once: the one in flight when it died may come twice. Those the dead worker had claimed
    // come back when their leases lapse, after plants queued later perhaps; until the crash, plant-id order.
    expect([...new Set(ids)].sort((a, b) => a - b)).toEqual(Array.from({ length: PLANTS }, (_, i) => base + i));
    expect(ids.length - PLANTS).toBeLessThanOrEqual(2);
    expect(ids.slice(0, before)).toEqual([...ids.slice(0, before)].sort((a, b) => a - b));
  });
});
