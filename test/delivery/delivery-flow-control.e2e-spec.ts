import { WorkerMetrics } from '../../apps/worker/src/metrics/worker-metrics';
import { adminClient } from '../../tools/harness/admin';
import { Received, Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// Issue 28, items 2 and 3: flow control per subscriber (maxConcurrency, maxDeliveriesPerSecond, a pause asked for
// with Retry-After) and its circuit breaker, against real receivers, with two worker replicas sharing the limits.
// In a database of its own, so that only this suite's workers send (and count as replicas).
const FAILURES_TO_OPEN = 3;

describe('flow control and the circuit breaker per subscriber', () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let env: NodeJS.ProcessEnv;
  let admin: ReturnType<typeof adminClient>;
  const workers: e2e.RunningWorker[] = [];
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  let sharedDatabaseUrl: string | undefined;

  beforeAll(async () => {
    db = await e2e.scratchDatabase('gating');
    // Everything this suite starts uses its database, the test set-up's migrations included.
    sharedDatabaseUrl = process.env.DATABASE_URL;
    process.env.DATABASE_URL = db.url;
    await receiver.start();
    env = e2e.baseEnv({
      DATABASE_URL: db.url,
      DELIVERY_TIMEOUT_MS: '3000',
      DELIVERY_POLL_MS: '200',
      DELIVERY_RETRY_SCHEDULE: '0s,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
      DELIVERY_CIRCUIT_FAILURES: String(FAILURES_TO_OPEN),
      DELIVERY_CIRCUIT_PROBE_MIN: '1s',
      DELIVERY_CIRCUIT_PROBE_MAX: '2s',
    });
    await e2e.prepareTestInfrastructure();
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    workers.push(await e2e.startWorker(env)); // first: its setup migrates the new database
    workers.push(await e2e.startWorker(env));
    gw = await e2e.startGateway(env);
    admin = adminClient(gw.url);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await gw?.close();
    await receiver.stop();
    await db?.drop();
    process.env.DATABASE_URL = sharedDatabaseUrl;
  });

  /** A subscriber of its own plants only (`ids`), on `path`. */
  const subscribe = async (path: string, ids: number[], extra: Record<string, unknown> = {}) =>
    admin.subscribe({
      url: receiver.url + path,
      filter: { plantIds: { min: Math.min(...ids), max: Math.max(...ids) } },
      ...extra,
    });
  const accept = async (id: number, name = `Plant ${id}`) => {
    const res = await e2e.postPlant(gw.url, { id, name });
    expect(res.status).toBe(200);
  };
  const plants = (n: number) => Array.from({ length: n }, () => nextId());
  const subscription = async (id: string) => (await admin.call('GET', `/subscriptions/${id}`)).body;
  const idOf = (r: Received) => JSON.parse(r.body).id as number;
  /** The subscription once the worker disabled it (15 s at most). */
  const disabledWithin15s = (id: string) =>
    waitFor(
      'the subscription disabled',
      async () => {
        const s = await subscription(id);
        return s.enabled === false ? s : null;
      },
      15000,
    );

  it('a 429 with Retry-After pauses that subscriber until then, spending no other attempt; others go on', async () => {
    const ids = plants(4);
    receiver.behave('/paused', (_r, nth) =>
      nth === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 204 },
    );
    // One at a time, so that the others are waiting when the first is answered.
    const paused = await subscribe('/paused', ids, { maxConcurrency: 1 });
    await subscribe('/unaffected', ids);
    for (const id of ids) await accept(id);
    const first = await waitFor('the first request', () => receiver.on('/paused')[0]);
    const shown = await waitFor('the pause shown', async () => (await subscription(paused.id)).pausedUntil);
    expect(Date.parse(shown)).toBeGreaterThan(first.at + 1500);
    await waitFor('the other subscriber served meanwhile', () => receiver.on('/unaffected').length === 4, 1500);
    // The one that got the 429 again, and three sent once each.
    await waitFor('every paused delivery', () => receiver.on('/paused').length === 5, 15000);
    const later = receiver.on('/paused').slice(1);
    expect(new Set(later.map(idOf))).toEqual(new Set(ids));
    for (const r of later) expect(r.at - first.at).toBeGreaterThanOrEqual(1900);
    // The receiver has the last request before the worker has recorded its answer: wait for the records.
    type Listed = { plantId: number; attempts: number; status: string };
    const deliveries = await waitFor('every outcome recorded', async () => {
      const items = (await admin.call('GET', `/deliveries?subscriptionId=${paused.id}`)).body.items as Listed[];
      return items.length === ids.length && items.every((d) => d.status !== 'pending') ? items : undefined;
    });
    const attempts = Object.fromEntries(deliveries.map((d) => [d.plantId, d.attempts]));
    expect(deliveries.every((d) => d.status === 'succeeded')).toBe(true);
    expect(attempts[idOf(first)]).toBe(2);
    expect(ids.filter((id) => id !== idOf(first)).map((id) => attempts[id])).toEqual([1, 1, 1]);
  });

  it('counts a subscriber that only ever asks to wait toward its breaker: its circuit opens', async () => {
    // Issue 36, part 2: 60 answers of 503 with Retry-After left the circuit closed with no failure counted, the
    // rows pending and growing, never auto-disabled. The pause is still honoured; it is just not a success.
    const ids = plants(2);
    receiver.behave('/busy', () => ({ status: 503, headers: { 'retry-after': '1' } }));
    // One at a time, so that each request is sent after the previous answer (and its pause).
    const sub = await subscribe('/busy', ids, { maxConcurrency: 1 });
    for (const id of ids) await accept(id);
    const opened = await waitFor(
      'the circuit open',
      async () => {
        const s = await subscription(sub.id);
        return s.circuit.state === 'open' ? s : null;
      },
      20_000,
    );
    expect(opened.circuit.lastError).toBe('HTTP 503');
    expect(opened.circuit.consecutiveFailures).toBeGreaterThanOrEqual(FAILURES_TO_OPEN);
    expect(opened.circuit.failingSince).not.toBeNull(); // the auto-disable clock runs
    // Every request it got was at least the second it asked for after the one before (the pause held).
    const at = receiver.on('/busy').map((r) => r.at);
    for (let i = 1; i < Math.min(at.length, FAILURES_TO_OPEN); i++)
      expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(900);
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  });

  it('keeps a subscriber within its maxConcurrency across both replicas', async () => {
    const ids = plants(12);
    let onWire = 0;
    let most = 0;
    receiver.behave('/narrow', () => {
      most = Math.max(most, ++onWire);
      return { status: 204, hold: new Promise<void>((r) => setTimeout(() => (onWire--, r()), 250)) };
    });
    await subscribe('/narrow', ids, { maxConcurrency: 3 });
    await Promise.all(ids.map((id) => accept(id)));
    await waitFor('every delivery', () => new Set(receiver.on('/narrow').map(idOf)).size === 12, 20000);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThanOrEqual(2); // not one at a time: the limit, not less
  });

  it('paces a subscriber to its maxDeliveriesPerSecond across both replicas', async () => {
    const ids = plants(20);
    await subscribe('/paced', ids, { maxDeliveriesPerSecond: 5 });
    await Promise.all(ids.map((id) => accept(id)));
    await waitFor('every delivery', () => new Set(receiver.on('/paced').map(idOf)).size === 20, 20000);
    const at = receiver.on('/paced').map((r) => r.at);
    const rate = ((at.length - 1) * 1000) / (at[at.length - 1] - at[0]);
    expect(rate).toBeLessThanOrEqual(5 * 1.25);
    // Over any second, the limit and at most one token stored ahead by each replica.
    const mostInASecond = Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 1000).length));
    expect(mostInASecond).toBeLessThanOrEqual(5 + 2);
  });

  it('opens the circuit after consecutive failures, then only probes; a success closes it and the backlog goes in order', async () => {
    const ids = plants(3);
    let down = true;
    receiver.behave('/flaky', () => ({ status: down ? 500 : 204 }));
    const ops = await admin.subscribe({
      url: `${receiver.url}/ops`,
      kind: 'operational',
      eventTypes: ['subscription.circuit_opened', 'subscription.circuit_closed'],
    });
    const sub = await subscribe('/flaky', ids);
    for (const id of ids) await accept(id, 'v1');
    const opened = await waitFor('the circuit open', async () => {
      const s = await subscription(sub.id);
      return s.circuit.state === 'open' ? s : null;
    });
    expect(opened.circuit).toMatchObject({ lastError: 'HTTP 500' });
    expect(opened.circuit.consecutiveFailures).toBeGreaterThanOrEqual(FAILURES_TO_OPEN);
    expect(Date.parse(opened.circuit.since)).toBeGreaterThan(Date.now() - 10000);
    await waitFor('the metric', async () =>
      new RegExp(`plant_store_subscription_circuit_state\\{subscription="${sub.id}",state="open"[^}]*\\} 1`).test(
        await workers[0].app.get(WorkerMetrics).registry.metrics(),
      ),
    );
    // A second version of the first plant while it is open: it must arrive after the first.
    await accept(ids[0], 'v2');
    // The other replica learns of the open circuit at its next heartbeat (up to a second, more on a loaded
    // machine): what it put on the wire until then is not a probe. Count from past that.
    await new Promise((r) => setTimeout(r, 1500));
    const before = receiver.on('/flaky').length;
    await new Promise((r) => setTimeout(r, 3500));
    const closedFrom = Date.now();
    // Retries fell due every 300 ms meanwhile: none was attempted, only probes (after 1 s, then 2 s).
    const probes = receiver.on('/flaky').slice(before);
    expect(probes.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < probes.length; i++) expect(probes[i].at - probes[i - 1].at).toBeGreaterThanOrEqual(900);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    down = false;
    await waitFor('the circuit closed', async () => (await subscription(sub.id)).circuit.state === 'closed', 10000);
    await waitFor('the backlog', () => receiver.on('/flaky').filter((r) => r.at > closedFrom).length >= 4, 10000);
    const ok = receiver.on('/flaky').filter((r) => r.at > closedFrom);
    const firstPlant = ok.filter((r) => idOf(r) === ids[0]).map((r) => JSON.parse(r.body).name);
    expect(firstPlant.indexOf('v1')).toBeGreaterThanOrEqual(0);
    expect(firstPlant.lastIndexOf('v1')).toBeLessThan(firstPlant.indexOf('v2')); // per-plant order kept
    expect(new Set(ok.map(idOf))).toEqual(new Set(ids));
    const trail = (await admin.call('GET', `/audit?subscriptionId=${sub.id}`)).body.items.map(
      (e: { action: string; actor: string }) => `${e.actor} ${e.action}`,
    );
    expect(trail).toEqual(
      expect.arrayContaining(['worker subscription.circuit_opened', 'worker subscription.circuit_closed']),
    );
    // Operators subscribed to Plant Store's own events are told, by the statements that made the transitions.
    const told = () =>
      receiver
        .on('/ops')
        .map((r) => JSON.parse(r.body))
        .filter((e) => e.data.subscriptionId === sub.id);
    await waitFor('both operational events', () => told().length >= 2);
    expect(told().map((e) => e.type)).toEqual(['subscription.circuit_opened', 'subscription.circuit_closed']);
    expect(told()[0].data).toMatchObject({ lastError: 'HTTP 500', consecutiveFailures: expect.any(Number) });
    expect(Date.parse(told()[1].data.openedAt)).toBe(Date.parse(told()[0].data.openedAt));
    await admin.call('DELETE', `/subscriptions/${ops.id}`);
  });

  it('disables a subscriber that keeps failing for DELIVERY_DISABLE_AFTER, with its reason', async () => {
    // Replicas of their own with a short setting.
    await Promise.all(workers.splice(0).map((w) => w.close()));
    workers.push(
      await e2e.startWorker({
        ...env,
        DELIVERY_DISABLE_AFTER: '2s',
        DELIVERY_CIRCUIT_FAILURES: '2',
        DELIVERY_CIRCUIT_PROBE_MIN: '500ms',
        DELIVERY_CIRCUIT_PROBE_MAX: '500ms',
      }),
    );
    const ids = plants(2);
    receiver.behave('/dead', () => ({ status: 503 }));
    const sub = await subscribe('/dead', ids);
    const start = Date.now();
    for (const id of ids) await accept(id);
    const disabled = await disabledWithin15s(sub.id);
    expect(Date.now() - start).toBeGreaterThanOrEqual(2000);
    expect(disabled.disabledReason).toMatch(/^failing since .*: \d+ consecutive failures, the last: HTTP 503$/);
    const trail = (await admin.call('GET', `/audit?subscriptionId=${sub.id}`)).body.items;
    expect(trail[0]).toMatchObject({ actor: 'worker', action: 'subscription.disabled' });
    // Nothing more is sent to it.
    const sent = receiver.on('/dead').length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.on('/dead')).toHaveLength(sent);
  });

  it('disables a failing subscriber past DELIVERY_PENDING_MAX waiting deliveries, and sends them all once enabled', async () => {
    // Issue #36: an endpoint that fails while plants keep coming grew its rows for five days.
    await Promise.all(workers.splice(0).map((w) => w.close()));
    workers.push(
      await e2e.startWorker({ ...env, DELIVERY_PENDING_MAX: '5', DELIVERY_RETRY_SCHEDULE: '0s,5s,5s,5s,5s,5s,5s,5s' }),
    );
    const ids = plants(12);
    let healthy = false;
    receiver.behave('/flooded', () => ({ status: healthy ? 204 : 503 }));
    const sub = await subscribe('/flooded', ids);
    const neighbour = await subscribe('/neighbour', ids);
    for (const id of ids) await accept(id);
    const disabled = await disabledWithin15s(sub.id);
    expect(disabled.disabledReason).toMatch(
      /^more than 5 deliveries waiting while its endpoint fails \(DELIVERY_PENDING_MAX\)/,
    );
    const trail = (await admin.call('GET', `/audit?subscriptionId=${sub.id}`)).body.items;
    expect(trail[0]).toMatchObject({ actor: 'worker', action: 'subscription.disabled' });
    await waitFor('the neighbour served meanwhile', () => receiver.on('/neighbour').length >= 12);
    expect((await subscription(neighbour.id)).enabled).toBe(true);
    // Nothing was lost: once the endpoint answers and the subscription is enabled, every plant goes.
    const since = Date.now();
    healthy = true;
    expect((await admin.call('PATCH', `/subscriptions/${sub.id}`, { enabled: true })).status).toBe(200);
    const answered = () =>
      new Set(
        receiver
          .on('/flooded')
          .filter((r) => r.at >= since)
          .map(idOf),
      );
    await waitFor('every plant delivered', () => ids.every((id) => answered().has(id)), 30000);
    expect((await subscription(sub.id)).enabled).toBe(true);
  });
});
