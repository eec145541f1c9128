import { Logger } from '@nestjs/common';
import { loadConfig, workerEnvSchema } from '@app/config';
import {
  AttemptRecord,
  ClaimedDelivery,
  DeliveryLease,
  HealthTransition,
  LeasedRef,
  OutcomeSummary,
  Outbox,
  SubscriberGate,
  SubscriberHealth,
} from '@app/delivery';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DeliveryInbox } from './delivery-inbox';
import { DeliverySender, SendResult } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';
import { SubscriberGates } from './subscriber-gates';

/**
 * The shared health as a fake: the gates the next heartbeat reads, the pauses asked for, the outcomes counted, and
 * the transitions the next count returns.
 */
function fakeHealth() {
  const state = {
    gates: [] as SubscriberGate[],
    pauses: [] as { subscriptionId: string; forMs: number }[],
    outcomes: [] as OutcomeSummary[],
    transitions: [] as HealthTransition[],
  };
  const health: SubscriberHealth = {
    heartbeat: async (replicaId) => ({ replicas: [replicaId], gates: state.gates }),
    leave: async () => undefined,
    recordOutcomes: async (outcomes) => {
      state.outcomes.push(...outcomes);
      return state.transitions.splice(0);
    },
    pause: async (subscriptionId, forMs) => {
      state.pauses.push({ subscriptionId, forMs });
      return { subscriptionId, kind: 'paused', forMs };
    },
    startProbe: async () => true,
  };
  return { health, state };
}
import { SubscriberCache } from '../subscribers/subscriber-cache';

/**
 * A delivery fanned out from event `event` (no row yet), or with `stored`, one claimed from the rows; leased for
 * a minute unless `lease` says otherwise.
 */
const delivery = (
  id: string,
  subscriptionId = 's1',
  event = `event-${id}`,
  hasRow = false,
  lease: Partial<DeliveryLease> = {},
): ClaimedDelivery => ({
  id,
  hasRow,
  subscriptionId,
  eventId: event,
  plantId: 1,
  body: '{"id":1,"name":"Fern"}',
  eventTime: new Date(),
  hops: 0,
  originEventId: event,
  traceparent: null,
  attempts: 0,
  url: 'http://receiver.test/hook',
  token: null,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  lease: { token: hasRow ? `lease-of-${id}` : `lease-of-${event}`, until: Date.now() + 60_000, ...lease },
});

const ok: SendResult = {
  attemptedAt: new Date().toISOString(),
  status: 204,
  latencyMs: 1,
  error: null,
  responseBody: null,
  retryAfterMs: null,
};

/**
 * A repository whose fan-outs hand out what a test queued (then nothing), which claims no rows, and which
 * remembers what was recorded (each write apart), marked fanned out and released.
 */
function fakeRepository() {
  const writes: { records: AttemptRecord[] }[] = [];
  const released = { deliveries: [] as string[], events: [] as string[] };
  const db = {
    stalled: null as Promise<void> | null,
    failFor: null as string | null,
    /** Records the database refuses for their data, as PostgreSQL refuses a NUL (22021): the whole statement. */
    refuses: (_r: AttemptRecord) => false,
    /** Leases another claim took after they lapsed: not renewed. */
    lost: new Set<string>(),
  };
  const events: ClaimedDelivery[][] = [];
  const repo = {
    fanOut: jest.fn(async (_limit: number, _defer: string[], _leaseMs: number) => ({
      claimed: events.shift() ?? [],
      more: false,
      deferred: 0,
    })),
    claimDue: jest.fn(async (): Promise<{ claimed: ClaimedDelivery[]; more: boolean }> => ({
      claimed: [],
      more: false,
    })),
    countPending: async () => ({ deliveries: 0, events: 0 }),
    record: async (records: AttemptRecord[]) => {
      await db.stalled;
      if (records.some((r) => r.delivery.id === db.failFor)) throw new Error('connection terminated');
      if (records.some(db.refuses))
        throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
      writes.push({ records });
    },
    renewLeases: jest.fn(async (held: ClaimedDelivery[], leaseMs: number) => ({
      renewed: new Set(held.filter((d) => !db.lost.has(d.lease.token)).map((d) => d.id)),
      until: Date.now() + leaseMs,
    })),
    releaseLeases: async (ds: LeasedRef[], events: LeasedRef[] = []) => {
      released.deliveries.push(...ds.map((d) => d.id));
      released.events.push(...events.map((e) => e.id));
    },
  } satisfies Outbox; // the port the dispatcher is given: a method it gains is a fake this test must add
  const recorded = () => writes.flatMap((w) => w.records);
  return { repo, writes, recorded, released, events, db, mocks: repo };
}

/** Every dispatcher a test made: stopped after it, even when an assertion failed first (its loop would keep
 * jest from exiting). */
const made: DeliveryDispatcher[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => d.onModuleDestroy()));
});

function setup(env: Record<string, string> = {}) {
  const config = loadConfig(workerEnvSchema, {
    DELIVERY_CONCURRENCY: '2',
    DELIVERY_POLL_MS: '60000',
    SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    ...env,
  });
  const fake = fakeRepository();
  const sent: string[] = [];
  let answer: (d: ClaimedDelivery) => Promise<SendResult> = async () => ok;
  const sender = { send: async (d: ClaimedDelivery) => (sent.push(d.id), answer(d)) } as unknown as DeliverySender;
  const metrics = new WorkerMetrics();
  const shared = fakeHealth();
  const gates = new SubscriberGates(config, shared.health, metrics);
  /** The subscriptions this worker holds: every one but those in `gone`. */
  const gone = new Set<string>();
  const subscribers = {
    onChange: () => undefined,
    admit: (id: string) => (gone.has(id) ? undefined : { id }),
  } as unknown as SubscriberCache;
  const sut = new DeliveryDispatcher(config, fake.repo, sender, new DeliverySignal(), metrics, gates, subscribers);
  made.push(sut);
  const inbox: DeliveryInbox = sut; // what the consumer sees of it
  /** Starts the loop with these events' deliveries for its first fan-out. */
  const start = (...deliveries: ClaimedDelivery[]) => {
    fake.events.push(deliveries);
    sut.onApplicationBootstrap();
  };
  return {
    ...fake,
    shared,
    gates,
    gone,
    sut,
    inbox,
    sent,
    metrics,
    start,
    hold: (f: (d: ClaimedDelivery) => Promise<SendResult>) => (answer = f),
  };
}

// Long enough for the recorder's linger on an idle machine; `until` for what must have happened (a loaded CI
// machine runs timers late).
const settle = () => new Promise((r) => setTimeout(r, 60));
async function until(what: string, done: () => boolean, ms = 5000) {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

describe(DeliveryDispatcher.name, () => {
  it("sends an event's deliveries from memory and records them; the last answered carries the event's subscribers", async () => {
    const { sut, writes, sent, start, hold } = setup();
    hold(async (d) => (d.id === 'a' ? new Promise((r) => setTimeout(() => r(ok), 15)) : ok)); // a answers last
    start(delivery('a', 's1', 'e1'), delivery('b', 's2', 'e1'), delivery('c', 's1', 'e2'));
    await until('three outcomes written', () => writes.flatMap((w) => w.records).length === 3);
    expect(sent.sort()).toEqual(['a', 'b', 'c']);
    const completes = Object.fromEntries(writes.flatMap((w) => w.records).map((r) => [r.delivery.id, r.completes]));
    expect(completes).toEqual({ a: ['s1', 's2'], b: undefined, c: ['s1'] });
    expect(writes.flatMap((w) => w.records).map((r) => r.outcome.kind)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    await sut.onModuleDestroy();
  });

  it('sends nothing to a subscription its copy of them no longer holds; the event is left to its lease', async () => {
    const { sut, writes, sent, start, gone } = setup();
    gone.add('s2');
    start(delivery('a', 's1', 'e1'), delivery('b', 's2', 'e1'));
    await until('one outcome written', () => writes.flatMap((w) => w.records).length === 1);
    await settle();
    expect(sent).toEqual(['a']);
    // The event is not completed by a's record: its lease lapses and the next fan-out finishes it.
    expect(writes.flatMap((w) => w.records).map((r) => [r.delivery.id, r.completes])).toEqual([['a', undefined]]);
    await sut.onModuleDestroy();
  });

  it('fans out for twice its concurrency, less what is queued or on the wire; the poll looks again', async () => {
    const { sut, mocks, hold, start } = setup({ DELIVERY_POLL_MS: '50' });
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered); // receivers that do not answer until the end of the test
    start(delivery('a'), delivery('b'), delivery('c'));
    await settle();
    expect(mocks.fanOut.mock.calls[0][0]).toBe(4);
    expect(mocks.fanOut.mock.calls[0][2]).toBeGreaterThan(15000); // the lease outlives an attempt's timeout
    await new Promise((r) => setTimeout(r, 120));
    // Two sending, one queued: the polls ask for the one slot left.
    expect(mocks.fanOut.mock.calls.length).toBeGreaterThan(1);
    expect(mocks.fanOut.mock.calls.slice(1).every((c) => c[0] === 1)).toBe(true);
    answer(ok);
    await sut.onModuleDestroy();
  });

  it('counts answered deliveries whose outcome is not yet written against its window: a slow database slows the intake', async () => {
    const { sut, db, recorded, metrics, mocks, start, sent } = setup();
    let unstall!: () => void;
    db.stalled = new Promise((r) => (unstall = r));
    start(delivery('a'), delivery('b'), delivery('c'), delivery('d'));
    await until('four sent', () => sent.length === 4);
    await settle();
    // All four answered; their outcomes wait for the database, and still hold the window.
    const scraped = await metrics.registry.getSingleMetricAsString('plant_store_dispatcher_deliveries');
    expect(scraped).toMatch(/state="recording",app="worker"} 4/);
    expect(await metrics.registry.getSingleMetricAsString('plant_store_dispatcher_window')).toMatch(/ 4$/m);
    expect(mocks.fanOut).toHaveBeenCalledTimes(1);
    unstall();
    await until('four outcomes written', () => recorded().length === 4);
    await sut.onModuleDestroy();
  });

  it('keeps its loop from spinning while the window is full of outcomes being written', async () => {
    const { sut, db, mocks, start } = setup();
    let unstall!: () => void;
    db.stalled = new Promise((r) => (unstall = r));
    mocks.claimDue.mockImplementation(async () => ({ claimed: [], more: true })); // a backlog: each answer wakes the loop
    start(delivery('a'), delivery('b'), delivery('c'), delivery('d'));
    // A loop with nothing on the wire and no room would never yield: this timer would never fire (before the
    // fix, this test hung, as the worker did at 100 % CPU).
    await settle();
    expect(mocks.fanOut.mock.calls.length + mocks.claimDue.mock.calls.length).toBeLessThanOrEqual(3);
    unstall();
    await sut.onModuleDestroy();
  });

  it('takes on deliveries the consumer hands over within its room, and fans out what it left', async () => {
    const { sut, inbox, writes, sent, mocks, hold } = setup();
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered);
    expect(inbox.offer().limit).toBe(4);
    inbox.accept([delivery('a', 's1', 'e1'), delivery('b', 's2', 'e1'), delivery('c', 's1', 'e2')], {
      events: 0,
      rows: 0,
    });
    expect(sent).toEqual(['a', 'b']); // two at once, one per subscriber in turn; c queued
    expect(inbox.offer().limit).toBe(1);
    expect(inbox.offer().leaseMs).toBeGreaterThan(15000); // outlives an attempt's timeout
    answer(ok);
    await until('three outcomes written', () => writes.flatMap((w) => w.records).length === 3);
    const completing = writes.flatMap((w) => w.records).filter((r) => r.completes);
    expect(completing.map((r) => r.delivery.eventId).sort()).toEqual(['e1', 'e2']);
    sut.onApplicationBootstrap();
    inbox.accept([], { events: 3, rows: 0 }); // events left for a fan-out: the loop runs one
    await until('a fan-out', () => mocks.fanOut.mock.calls.length > 0);
    await sut.onModuleDestroy();
  });

  it('gives freed slots to subscribers in turn, not to the first one with a queue', async () => {
    const { sut, inbox, sent, hold } = setup({ DELIVERY_CONCURRENCY: '1' });
    const answers: (() => void)[] = [];
    hold(() => new Promise<SendResult>((r) => answers.push(() => r(ok))));
    inbox.accept(
      ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((id) => delivery(id, `s-${id[0]}`)),
      { events: 0, rows: 0 },
    );
    for (let i = 0; i < 5; i++) {
      answers.shift()!(); // one slot frees
      await new Promise((r) => setImmediate(r));
    }
    expect(sent).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    answers.shift()!();
    await sut.onModuleDestroy();
  });

  it('lets a subscriber that is slow to answer hold only an equal share of the sending slots while others have work', async () => {
    const { sut, inbox, sent, hold } = setup({ DELIVERY_CONCURRENCY: '8', DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '8' });
    const answers: (() => void)[] = [];
    hold(() => new Promise<SendResult>((r) => answers.push(() => r(ok))));
    // Alone, the slow one may fill every slot its own cap allows...
    inbox.accept(
      Array.from({ length: 6 }, (_, i) => delivery(`slow-${i}`, 'slow')),
      { events: 0, rows: 0 },
    );
    expect(sent).toHaveLength(6);
    // ...but once a second subscriber has work, each may hold half (4): slow's freed slots go to the fast one.
    inbox.accept(
      Array.from({ length: 4 }, (_, i) => delivery(`fast-${i}`, 'fast')).concat(delivery('slow-6', 'slow')),
      { events: 0, rows: 0 },
    );
    expect(sent.filter((id) => id.startsWith('fast'))).toEqual(['fast-0', 'fast-1']); // 8 slots: 6 slow + 2
    for (let i = 0; i < 2; i++) {
      answers.shift()!(); // a slow one answers: its slot goes to the fast one
      await new Promise((r) => setImmediate(r));
    }
    expect(sent.filter((id) => id.startsWith('fast'))).toEqual(['fast-0', 'fast-1', 'fast-2', 'fast-3']);
    expect(sent).not.toContain('slow-6'); // slow holds its share: 4 on the wire
    answers.shift()!(); // below its share again
    await new Promise((r) => setImmediate(r));
    expect(sent).toContain('slow-6');
    while (answers.length > 0) answers.shift()!();
    await sut.onModuleDestroy();
  });

  it('says once per 10 s, not every poll, that the database cannot be reached', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const { sut, mocks } = setup({ DELIVERY_POLL_MS: '10' });
      mocks.fanOut.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      mocks.claimDue.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      sut.onApplicationBootstrap();
      await until('several polls', () => mocks.fanOut.mock.calls.length >= 5 && mocks.claimDue.mock.calls.length >= 5);
      expect(warn.mock.calls.map((c) => String(c[0]).split(':')[0]).sort()).toEqual([
        'claiming deliveries failed, will retry',
        'fanning out events failed, will retry',
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('hands events back when their deliveries arrive after it stopped, instead of letting them wait for expiry', async () => {
    const { sut, inbox, released, sent } = setup();
    await sut.onModuleDestroy();
    expect(inbox.offer().limit).toBe(0);
    inbox.accept([delivery('late', 's1', 'e9'), delivery('later', 's2', 'e9')], { events: 0, rows: 0 });
    await settle();
    expect(sent).toEqual([]);
    expect(released.events).toEqual(['e9']);
  });

  it('on stop, hands back claimed rows not sent yet and events with deliveries not sent', async () => {
    const { sut, released, sent, hold, start, mocks } = setup();
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered);
    mocks.claimDue.mockResolvedValueOnce({ claimed: [delivery('r', 's1', 'e0', true)], more: false });
    start(delivery('a', 's1', 'e1'), delivery('b', 's1', 'e1'), delivery('c', 's1', 'e2'));
    await until('two sent', () => sent.length === 2);
    await settle();
    expect(sent).toEqual(['a', 'b']); // two at once: c and r wait in the queue
    const stopping = sut.onModuleDestroy();
    answer(ok);
    await stopping;
    expect(released.deliveries).toEqual(['r']);
    expect(released.events).toEqual(['e2']); // e1's deliveries were all recorded
  });

  describe('leases', () => {
    it('renews the lease of a delivery that waited too long for a slot, and does not send one whose lease was lost', async () => {
      // Lease 6 s; an attempt takes up to 1 s: a delivery is sent at once only with 1 s + 2 s of its lease left.
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const { sut, sent, recorded, released, mocks, db, start } = setup({ DELIVERY_TIMEOUT_MS: '1000' });
      const soon = Date.now() + 1500;
      db.lost.add('lease-of-e-lost');
      mocks.claimDue.mockResolvedValueOnce({
        claimed: [delivery('row', 's4', 'e-row', true, { until: soon })],
        more: false,
      });
      start(
        delivery('fresh', 's1', 'e-fresh'),
        delivery('waited', 's2', 'e-waited', false, { until: soon }),
        delivery('lost', 's3', 'e-lost', false, { until: soon }),
      );
      await until('three outcomes written', () => recorded().length === 3);
      await settle();
      expect(sent.sort()).toEqual(['fresh', 'row', 'waited']);
      expect(
        recorded()
          .map((r) => r.delivery.id)
          .sort(),
      ).toEqual(['fresh', 'row', 'waited']);
      // Only those short of lease were renewed, and each now holds it for another 6 s.
      const renewedIds = mocks.renewLeases.mock.calls.flatMap(([held]) => held.map((d) => d.id));
      expect(renewedIds.sort()).toEqual(['lost', 'row', 'waited']);
      expect(mocks.renewLeases.mock.calls[0][1]).toBe(6000);
      const waited = recorded().find((r) => r.delivery.id === 'waited')!;
      expect(waited.delivery.lease.until).toBeGreaterThan(Date.now() + 5000);
      // The lost one's event is not held here any more: nothing of it to hand back.
      await sut.onModuleDestroy();
      expect(released.events).toEqual([]);
      expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringMatching(/^delivery lost .* not sent/)]);
      warn.mockRestore();
    });

    it('renews the leases of deliveries waiting in its queue before they lapse; drops one another claim took', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const { sut, sent, mocks, db, start, hold } = setup({ DELIVERY_TIMEOUT_MS: '1000', DELIVERY_CONCURRENCY: '1' });
      let answer!: (r: SendResult) => void;
      hold((d) => (d.id === 'busy' ? new Promise<SendResult>((r) => (answer = r)) : Promise.resolve(ok)));
      db.lost.add('lease-of-e-taken');
      start(
        delivery('busy', 's1', 'e-busy'),
        delivery('kept', 's2', 'e-kept', false, { until: Date.now() + 4500 }),
        delivery('taken', 's3', 'e-taken', false, { until: Date.now() + 4500 }),
      );
      await until('the queued leases renewed', () => mocks.renewLeases.mock.calls.length > 0, 3000);
      expect(mocks.renewLeases.mock.calls[0][0].map((d) => d.id).sort()).toEqual(['kept', 'taken']);
      answer(ok); // the slot frees: only the one still held is sent
      await until('kept sent', () => sent.includes('kept'));
      await settle();
      expect(sent).toEqual(['busy', 'kept']);
      await sut.onModuleDestroy();
      warn.mockRestore();
    });

    it('does not send what it cannot renew while the database is away', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      try {
        const { inbox, sent, recorded, mocks } = setup({ DELIVERY_TIMEOUT_MS: '1000' });
        mocks.renewLeases.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
        inbox.accept([delivery('a', 's1', 'e1', false, { until: Date.now() + 100 })], { events: 0, rows: 0 });
        await until('the renewal tried', () => mocks.renewLeases.mock.calls.length === 1);
        await settle();
        expect(sent).toEqual([]);
        expect(recorded()).toEqual([]);
      } finally {
        warn.mockRestore();
      }
    });

    it('keeps counting an event fanned out again under a new lease apart from the one it lost', async () => {
      const { inbox, recorded } = setup();
      inbox.accept([delivery('old', 's1', 'e1', false, { token: 'first' })], { events: 0, rows: 0 });
      inbox.accept(
        [
          delivery('new-a', 's1', 'e1', false, { token: 'second' }),
          delivery('new-b', 's2', 'e1', false, { token: 'second' }),
        ],
        { events: 0, rows: 0 },
      );
      await until('three outcomes written', () => recorded().length === 3);
      const completes = Object.fromEntries(recorded().map((r) => [r.delivery.id, r.completes]));
      // The old lease's delivery completes nothing; the new lease's last answered carries its two subscribers.
      expect(completes.old).toBeUndefined();
      expect([completes['new-a'], completes['new-b']].filter(Boolean)).toEqual([['s1', 's2']]);
    });
  });

  it('writes a record the database refuses for its data again without the reply; the rest of its batch as they were', async () => {
    const { inbox, recorded, hold, db } = setup({ DELIVERY_CONCURRENCY: '4' });
    db.refuses = (r) => r.attempt?.responseBody?.includes('\u0000') ?? false;
    hold(async (d) => ({ ...ok, responseBody: d.id === 'odd' ? 'O\u0000K\u0000' : 'fine' }));
    inbox.accept(
      ['a', 'odd', 'b', 'c'].map((id, i) => delivery(id, `s${i}`)),
      { events: 0, rows: 0 },
    );
    await until('four outcomes written', () => recorded().length === 4);
    const byId = Object.fromEntries(recorded().map((r) => [r.delivery.id, r]));
    expect(Object.keys(byId).sort()).toEqual(['a', 'b', 'c', 'odd']);
    for (const id of ['a', 'b', 'c']) expect(byId[id].attempt).toMatchObject({ responseBody: 'fine', error: null });
    expect(byId.odd.outcome).toEqual({ kind: 'succeeded' });
    expect(byId.odd.attempt?.responseBody).toBeNull();
    expect(byId.odd.attempt?.error).toMatch(/refused by the database \(invalid byte sequence/);
  });

  describe('subscriber gates', () => {
    it('a 429 with Retry-After pauses that subscriber: its queued deliveries are written to wait unattempted, others go on', async () => {
      const { inbox, sent, hold, recorded, shared, sut } = setup({
        DELIVERY_CONCURRENCY: '4',
        DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '1',
      });
      hold(async (d) => (d.id === 'a1' ? { ...ok, status: 429, retryAfterMs: 2000 } : ok));
      inbox.accept([delivery('a1', 's1'), delivery('a2', 's1'), delivery('a3', 's1'), delivery('b1', 's2')], {
        events: 0,
        rows: 0,
      });
      await until('four records', () => recorded().length === 4);
      expect(sent.sort()).toEqual(['a1', 'b1']);
      const byId = Object.fromEntries(recorded().map((r) => [r.delivery.id, r]));
      expect(byId.a1.outcome.kind).toBe('retry');
      for (const id of ['a2', 'a3']) {
        expect(byId[id].attempt).toBeNull();
        expect(byId[id].outcome).toEqual({ kind: 'retry', delayMs: 0 });
      }
      expect(shared.state.pauses).toEqual([{ subscriptionId: 's1', forMs: 2000 }]);
      expect(sut.offer().skipSubscriptions).toEqual(['s1']);
      // A paused subscriber's delivery claimed meanwhile is handed back, not sent.
      inbox.accept([delivery('a4', 's1')], { events: 0, rows: 0 });
      await until('a4 set aside', () => recorded().length === 5);
      expect(sent).not.toContain('a4');
    });

    it("hands a paused subscriber's claimed rows back instead of sending them", async () => {
      const { inbox, sent, hold, released } = setup({ DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '1' });
      hold(async (d) => (d.id === 'r1' ? { ...ok, status: 503, retryAfterMs: 5000 } : ok));
      inbox.accept([delivery('r1', 's1', 'e1', true), delivery('r2', 's1', 'e2', true)], { events: 0, rows: 0 });
      await until('r2 handed back', () => released.deliveries.includes('r2'));
      expect(sent).toEqual(['r1']);
    });

    it('keeps a subscriber within its maxConcurrency and paces it to its maxDeliveriesPerSecond', async () => {
      const { sent, hold, start, shared } = setup({ DELIVERY_CONCURRENCY: '8' });
      shared.state.gates = [
        {
          subscriptionId: 's1',
          maxDeliveriesPerSecond: null,
          maxConcurrency: 2,
          pausedForMs: null,
          circuit: 'closed',
          probeInMs: null,
          consecutiveFailures: 0,
        },
        {
          subscriptionId: 's2',
          maxDeliveriesPerSecond: 20,
          maxConcurrency: null,
          pausedForMs: null,
          circuit: 'closed',
          probeInMs: null,
          consecutiveFailures: 0,
        },
      ];
      let onWire = 0;
      let most = 0;
      const at: number[] = [];
      hold(async (d) => {
        if (d.subscriptionId === 's2') {
          at.push(Date.now());
          return ok;
        }
        most = Math.max(most, ++onWire);
        await new Promise((r) => setTimeout(r, 30));
        onWire--;
        return ok;
      });
      start(
        ...['a', 'b', 'c', 'd'].map((id) => delivery(id, 's1')),
        ...['p', 'q', 'r', 's'].map((id) => delivery(id, 's2')),
      );
      await until('eight sent', () => sent.length === 8);
      expect(most).toBe(2);
      // 20/s with a burst of 2: the last two of four at least 50 ms apart each.
      expect(at[3] - at[0]).toBeGreaterThanOrEqual(90);
    });

    it('an opened circuit sets what is queued aside; nothing else is attempted', async () => {
      const { inbox, sent, hold, recorded, shared, gates } = setup({
        DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '1',
        DELIVERY_CIRCUIT_FAILURES: '1',
      });
      shared.state.transitions = [{ subscriptionId: 's1', kind: 'circuit_opened', forMs: 60000, reason: 'HTTP 500' }];
      hold(async () => ({ ...ok, status: 500 }));
      inbox.accept([delivery('a1', 's1'), delivery('a2', 's1')], { events: 0, rows: 0 });
      await until('two records', () => recorded().length === 2);
      expect(sent).toEqual(['a1']);
      expect(recorded().find((r) => r.delivery.id === 'a2')?.attempt).toBeNull();
      expect(shared.state.outcomes).toEqual([
        { subscriptionId: 's1', succeeded: false, failures: 1, lastError: 'HTTP 500' },
      ]);
      expect(gates.shut('s1')).toBe(true);
      expect(gates.circuits().get('s1')).toBe('open');
    });
  });
});
