import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig, workerEnvSchema } from '@app/config';
import { runMigrations, SecretBox, SubscriptionRepository, subscriptionContext } from '@app/persistence';
import type { SubscriberSet } from '@app/delivery';
import { SubscriberCache } from '../../apps/worker/src/subscribers/subscriber-cache';
import { WorkerMetrics } from '../../apps/worker/src/metrics/worker-metrics';
import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// Each worker fans a batch out from the subscriptions it holds in memory (SubscriberCache). A change made while
// events are in flight is honoured by the next fan-out, a deleted subscription gets nothing once its delete has
// returned, and a notification the worker never heard costs one poll. On a database and topics of its own: its
// worker sends this suite's deliveries alone, and its subscribers get this suite's plants alone.
describe('the subscriptions a worker holds in memory', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    await receiver.start();
    // Two requests at a time per subscriber: a slow one queues its deliveries in the worker.
    stack = await startOwnStack('subscription_cache', { DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '2' });
    gw = stack.gateway;
    admin = adminClient(gw.url);
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  const subscribe = async (path: string): Promise<string> => {
    const res = await admin.call('POST', '/subscriptions', { url: receiver.url + path });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const post = async (id: number, tag?: string) =>
    expect((await e2e.postPlant(gw.url, { id, name: 'Fern', ...(tag ? { tag } : {}) })).status).toBe(200);

  it('honours a filter changed, and a subscription disabled, while events are in flight', async () => {
    const [filtered, disabled] = [await subscribe('/filtered'), await subscribe('/disabled')];
    await subscribe('/witness');
    const first = nextId();
    await post(first);
    await waitFor('the first plant everywhere', () =>
      ['/filtered', '/disabled', '/witness'].every((p) => receiver.on(p, first).length === 1),
    );
    // Changed, then at once a plant: the worker may not have reloaded yet; its fan-out must still honour both.
    expect((await admin.call('PATCH', `/subscriptions/${filtered}`, { filter: { tags: ['never'] } })).status).toBe(200);
    expect((await admin.call('PATCH', `/subscriptions/${disabled}`, { enabled: false })).status).toBe(200);
    const next = [nextId(), nextId(), nextId()];
    for (const id of next) await post(id, 'indoor');
    await waitFor('the next plants at the witness', () => receiver.on('/witness', ...next).length === 3);
    await new Promise((r) => setTimeout(r, 500)); // anything sent to the others would have come by now
    expect(receiver.on('/filtered', ...next)).toEqual([]);
    expect(receiver.on('/disabled', ...next)).toEqual([]);
  });

  it('sends a change of custom headers, secret headers and URL with the next fan-out', async () => {
    const id = await subscribe('/before');
    const res = await admin.call('PATCH', `/subscriptions/${id}`, {
      headers: { 'X-Team': 'plants' },
      secretHeaders: { 'X-Api-Key': 'key-one' },
    });
    expect(res.status).toBe(200);
    const first = nextId();
    await post(first);
    await waitFor('the first plant', () => receiver.on('/before', first).length === 1);
    expect(receiver.on('/before', first)[0].headers).toMatchObject({ 'x-team': 'plants', 'x-api-key': 'key-one' });
    // Changed, then at once a plant: it goes where the subscription says now, with what it says now.
    const patched = await admin.call('PATCH', `/subscriptions/${id}`, {
      url: receiver.url + '/after',
      headers: { 'X-Team': 'trees' },
      secretHeaders: { 'X-Api-Key': 'key-two' },
    });
    expect(patched.status).toBe(200);
    const next = nextId();
    await post(next);
    await waitFor('the next plant at the new URL', () => receiver.on('/after', next).length === 1);
    expect(receiver.on('/after', next)[0].headers).toMatchObject({ 'x-team': 'trees', 'x-api-key': 'key-two' });
    expect(receiver.on('/before', next)).toEqual([]);
  });

  it('fans no New Plant out to an operational subscription', async () => {
    const res = await admin.call('POST', '/subscriptions', {
      url: receiver.url + '/operational',
      kind: 'operational',
    });
    expect(res.status).toBe(201);
    await subscribe('/witness-3');
    const id = nextId();
    await post(id);
    await waitFor('the plant at the witness', () => receiver.on('/witness-3', id).length === 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.on('/operational', id)).toEqual([]);
  });

  it('sends nothing to a deleted subscription once its delete has returned, even what was queued for it', async () => {
    const doomed = await subscribe('/doomed');
    await subscribe('/witness-2');
    receiver.behave('/doomed', () => ({ status: 204, delayMs: 100 }));
    const plants = Array.from({ length: 30 }, () => nextId());
    await Promise.all(plants.map((id) => post(id)));
    await waitFor('the first deliveries to the slow subscriber', () => receiver.on('/doomed', ...plants).length >= 2);
    expect((await admin.call('DELETE', `/subscriptions/${doomed}`)).status).toBe(204);
    const returned = Date.now();
    const later = [nextId(), nextId()];
    for (const id of later) await post(id);
    await waitFor('every plant at the witness', () => receiver.on('/witness-2', ...plants, ...later).length === 32);
    await new Promise((r) => setTimeout(r, 1000));
    const arrived = receiver.on('/doomed', ...plants, ...later);
    expect(arrived.length).toBeLessThan(plants.length); // what was queued for it was dropped, not sent
    // A request arriving after the 204 was sent after it (a request sent just before arrives within milliseconds).
    expect(arrived.filter((r) => r.at > returned + 100)).toEqual([]);
    expect(receiver.on('/doomed', ...later)).toEqual([]);
  });
});

describe('a missed notification', () => {
  let db: e2e.ScratchDatabase;
  let cache: SubscriberCache;
  const box = new SecretBox(randomBytes(32));
  const loads = { all: 0, changed: 0 };

  beforeAll(async () => {
    db = await e2e.scratchDatabase('subscriber_cache');
    await runMigrations(db.pool);
    const config = loadConfig(workerEnvSchema, {
      ...e2e.baseEnv(),
      DATABASE_URL: db.url,
      SECRETS_KEY: randomBytes(32).toString('base64'),
    });
    const repository = new SubscriptionRepository(db.pool, box);
    // Counts how the cache reloads: every subscription, or the changed ones alone.
    const source = {
      load: () => {
        loads.all++;
        return repository.load();
      },
      loadChanges: async (set: SubscriberSet) => {
        const changed = await repository.loadChanges(set);
        if (changed) loads.changed++;
        return changed;
      },
    };
    cache = new SubscriberCache(source, config, new WorkerMetrics());
    await cache.onModuleInit();
  });

  afterAll(async () => {
    await cache?.onModuleDestroy();
    await db?.drop();
  });

  const addSubscription = async () => {
    const id = randomUUID();
    const secret = box.seal('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', subscriptionContext(id));
    await db.pool.query("INSERT INTO subscriptions (id, url, secret) VALUES ($1, 'http://receiver.test/hook', $2)", [
      id,
      secret,
    ]);
    return id;
  };
  const holds = async (id: string) => (await cache.current()).subscribers.has(id);

  it('reloads on the notification', async () => {
    const id = await addSubscription();
    await waitFor('the new subscription in memory', () => holds(id), 2000);
    expect((await cache.current()).subscribers.get(id)?.secret).toBe('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  });

  it('catches a change made while its LISTEN connection was gone, with its next poll', async () => {
    // The listening backend killed, and a change committed before the worker can listen again: no notification
    // reaches it. Its poll (after reconnecting) finds the version moved.
    const killed = await db.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'plant-store-worker-subscriptions' AND datname = current_database()",
    );
    expect(killed.rowCount).toBe(1);
    const id = await addSubscription();
    await waitFor('the change, by the poll', () => holds(id), 3000);
    // It listens again: the next change comes by notification, sooner than a poll.
    await db.pool.query('UPDATE subscriptions SET enabled = false WHERE id = $1', [id]);
    await waitFor('the disabled subscription gone from memory', async () => !(await holds(id)), 2000);
  });

  it("moves the version for what a worker sends with, not for the breaker's own columns", async () => {
    const id = await addSubscription();
    const version = async () =>
      (await db.pool.query('SELECT version::text AS v FROM subscription_versions')).rows[0].v as string;
    const before = await version();
    // What every batch of outcomes writes (its count, its circuit, a pause): read by the heartbeat instead.
    await db.pool.query(
      `UPDATE subscriptions SET consecutive_failures = 3, failing_since = now(), circuit_state = 'open',
       circuit_probe_at = now(), paused_until = now() + interval '1 minute', updated_at = now() WHERE id = $1`,
      [id],
    );
    expect(await version()).toBe(before);
    await db.pool.query(`UPDATE subscriptions SET headers = '{"X-Team": "plants"}' WHERE id = $1`, [id]);
    expect(BigInt(await version())).toBe(BigInt(before) + 1n);
    await waitFor(
      'the header in memory',
      async () => {
        const s = (await cache.current()).subscribers.get(id);
        return s?.headers['X-Team'] === 'plants';
      },
      2000,
    );
    await db.pool.query('UPDATE subscriptions SET max_concurrency = 2 WHERE id = $1', [id]);
    await waitFor(
      'the limit in memory',
      async () => {
        const s = (await cache.current()).subscribers.get(id);
        return s?.limits.maxConcurrency === 2;
      },
      2000,
    );
  });

  it('admits a send only while its copy is confirmed current', async () => {
    const id = await addSubscription();
    await waitFor('the new subscription in memory', () => holds(id), 2000);
    expect(await cache.admit(id)).toBeDefined();
    await db.pool.query('DELETE FROM subscriptions WHERE id = $1', [id]);
    await waitFor('the deleted subscription refused', async () => (await cache.admit(id)) === undefined, 2000);
  });

  it('reloads only the subscription a change is about; all of them when its copy is older than the change log', async () => {
    // Issue #36: each change made every worker reload and re-open every subscription.
    const [changed, other] = [await addSubscription(), await addSubscription()];
    await waitFor('both in memory', async () => (await holds(changed)) && holds(other), 2000);
    const before = { ...loads };
    const untouched = (await cache.current()).subscribers.get(other);
    await db.pool.query(`UPDATE subscriptions SET headers = '{"X-Shelf": "3"}' WHERE id = $1`, [changed]);
    await waitFor(
      'the change in memory',
      async () => (await cache.current()).subscribers.get(changed)?.headers['X-Shelf'] === '3',
      2000,
    );
    expect(loads).toEqual({ all: before.all, changed: before.changed + 1 });
    expect((await cache.current()).subscribers.get(other)).toBe(untouched); // not read again, nor re-opened
    // A copy older than what the log keeps (here: versions moved past it without a record) is loaded whole.
    await db.pool.query('UPDATE subscription_versions SET version = version + 5');
    await db.pool.query(`UPDATE subscriptions SET headers = '{"X-Shelf": "4"}' WHERE id = $1`, [changed]);
    await waitFor(
      'the next change in memory',
      async () => (await cache.current()).subscribers.get(changed)?.headers['X-Shelf'] === '4',
      3000,
    );
    expect(loads.all).toBe(before.all + 1);
    expect((await cache.current()).subscribers.get(other)?.secret).toBe('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  });
});
