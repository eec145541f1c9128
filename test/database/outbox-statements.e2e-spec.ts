import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import {
  AttemptOutcome,
  ClaimedDelivery,
  ClaimResult,
  fannedOutDeliveries,
  IngestEvent,
  NO_OFFER,
  IntakeOffer,
  planFanOut,
} from '@app/delivery';
import {
  IngestRepository,
  OutboxRepository,
  runMigrations,
  SecretBox,
  SubscriptionRepository,
  subscriptionContext,
  FAN_OUT_SQL,
} from '@app/persistence';
import * as e2e from '../../tools/harness/stack';
import { answeredAttempt, ingestEvent, insertSubscription } from '../fixtures/stored-rows';

// The hardest statements, against the real PostgreSQL, in a database of their own (a claim sees every pending
// delivery, so other suites' rows must not be there): the ingest statement (events, plants and the outbox in
// one), the fan-out of outbox events, the recording of what was sent from memory, and the claim of rows.
const MAX_HOPS = 10;
const LEASE_MS = 30_000;
const room = (limit: number, skipSubscriptions: string[] = []): IntakeOffer => ({
  limit,
  skipSubscriptions,
  leaseMs: LEASE_MS,
});
const box = new SecretBox(randomBytes(32));

describe('the ingest statement and the claim', () => {
  let db: e2e.ScratchDatabase;
  let pool: Pool;
  let ingest: IngestRepository;
  let outbox: OutboxRepository;
  let subscriptions: SubscriptionRepository;
  let offset = 0;
  /**
   * The ingest statement as the worker sends it: fanned out to the subscriptions as they are now (a worker's copy
   * of them), its deliveries to send built from the events.
   */
  const apply = async (events: IngestEvent[], lease: IntakeOffer, maxHops: number) => {
    const set = await subscriptions.load();
    const plan = planFanOut(events, set, maxHops);
    const r = await ingest.applyEvents(events, lease, maxHops, plan);
    return { ...r, fanned: fannedOutDeliveries(events, plan, set, r) };
  };
  let plantId = 1000;

  const event = (over: Partial<IngestEvent> = {}): IngestEvent => ingestEvent(over.plantId ?? plantId, offset++, over);
  const subscribe = (enabled = true) => insertSubscription(pool, box, enabled);
  const deliveriesOf = async (plant: number) =>
    (
      await pool.query(
        'SELECT subscription_id, event_id, status, leased_until FROM all_deliveries WHERE plant_id = $1 ORDER BY seq',
        [plant],
      )
    ).rows;
  const outboxRows = async () =>
    (await pool.query('SELECT event_id, leased_until, fanned_out_at FROM outbox_events ORDER BY seq')).rows;
  /** `completes`: the delivery is its event's last to be answered; these are the subscribers it went to. */
  const record = (d: ClaimedDelivery, outcome: AttemptOutcome, completes?: string[]) =>
    outbox.record([
      { delivery: d, attempt: answeredAttempt(outcome.kind === 'succeeded' ? 204 : 503), outcome, completes },
    ]);
  const succeed = (d: ClaimedDelivery, completes?: string[]) => record(d, { kind: 'succeeded' }, completes);
  const failOnce = (d: ClaimedDelivery, completes?: string[]) => record(d, { kind: 'retry', delayMs: 0 }, completes);
  /** Stores events and writes every delivery they owe as a row (each subscriber treated as saturated). */
  const storeAsRows = async (events: IngestEvent[]) => {
    await apply(events, NO_OFFER, MAX_HOPS);
    const all = (await pool.query('SELECT id FROM subscriptions')).rows.map((r) => r.id);
    for (;;) {
      const r = await outbox.fanOut(10_000, all, LEASE_MS);
      expect(r.claimed).toEqual([]);
      if (!r.more) return;
    }
  };
  /** Four replicas, two loops each, taking with `take` until nothing is left: everything they took. */
  const race = async (take: (o: OutboxRepository) => Promise<ClaimResult>): Promise<ClaimedDelivery[]> => {
    const replicas = Array.from({ length: 4 }, () => new Pool({ connectionString: db.url, max: 2 }));
    const taken: ClaimedDelivery[] = [];
    await Promise.all(
      replicas.flatMap((p) => {
        const o = new OutboxRepository(p, box);
        return [0, 1].map(async () => {
          for (;;) {
            const r = await take(o);
            taken.push(...r.claimed);
            if (r.claimed.length === 0 && !r.more) return;
          }
        });
      }),
    );
    await Promise.all(replicas.map((p) => p.end()));
    return taken;
  };
  const expireLeases = () =>
    pool.query("UPDATE outbox_events SET leased_until = now() - interval '1 second' WHERE fanned_out_at IS NULL");

  beforeAll(async () => {
    db = await e2e.scratchDatabase('outbox');
    pool = db.pool;
    await runMigrations(pool);
    ingest = new IngestRepository(pool, box);
    outbox = new OutboxRepository(pool, box);
    subscriptions = new SubscriptionRepository(pool, box);
  });

  afterAll(() => db?.drop());

  beforeEach(async () => {
    plantId += 1000;
    await pool.query(
      'DELETE FROM deliveries; DELETE FROM delivery_log; DELETE FROM subscriptions; DELETE FROM outbox_events',
    );
  });

  describe('ingest', () => {
    it('applies an event id once, however often it comes', async () => {
      const e = event();
      const first = await apply([e, { ...e, offset: String(offset++) }], NO_OFFER, MAX_HOPS);
      const again = await apply([e], NO_OFFER, MAX_HOPS);
      expect([...first.fresh]).toEqual([e.eventId]);
      expect([...first.applied]).toEqual([e.eventId]);
      expect(again.fresh.size + again.applied.size).toBe(0);
    });

    it('keeps the latest event of a plant, in a batch and across batches; an older one is stale', async () => {
      const t = Date.now();
      const older = event({ name: 'Old', eventTime: new Date(t - 1000).toISOString() });
      const newer = event({ name: 'New', eventTime: new Date(t).toISOString() });
      const r = await apply([newer, older], NO_OFFER, MAX_HOPS);
      expect([...r.applied]).toEqual([newer.eventId]);
      const late = event({ name: 'Late but older', eventTime: new Date(t - 500).toISOString() });
      const stale = await apply([late], NO_OFFER, MAX_HOPS);
      expect([...stale.fresh]).toEqual([late.eventId]);
      expect(stale.applied.size).toBe(0);
      const { rows } = await pool.query('SELECT name, last_event_id FROM plants WHERE id = $1', [plantId]);
      expect(rows[0]).toEqual({ name: 'New', last_event_id: newer.eventId });
    });

    it('writes one outbox event per changed plant, none for the same data again, none with no one subscribed', async () => {
      const nobody = await apply([event({ name: 'Alone' })], NO_OFFER, MAX_HOPS);
      expect([...nobody.applied]).toHaveLength(1);
      expect(nobody.outboxed).toBe(0);
      await subscribe();
      const r = await apply([event({ name: 'Fern', tag: 'x' })], NO_OFFER, MAX_HOPS);
      expect(r.outboxed).toBe(1);
      expect(await deliveriesOf(plantId)).toEqual([]); // written when fanned out
      const same = event({ name: 'Fern', tag: 'x' });
      const echo = await apply([same], NO_OFFER, MAX_HOPS);
      expect([...echo.unchanged]).toEqual([same.eventId]);
      expect(echo.outboxed).toBe(0);
    });

    it('reports, and does not store, an event id that comes again with another plant (a reused key)', async () => {
      const first = event({ name: 'Fern' });
      const r1 = await apply([first], NO_OFFER, MAX_HOPS);
      expect(r1.keyReused).toEqual([]);
      // Another replica accepted the same key with another plant: same event id, another digest.
      const other = { ...first, name: 'Not a fern', digest: 'digest of Not a fern', offset: String(offset++) };
      const r2 = await apply([other], NO_OFFER, MAX_HOPS);
      expect(r2.keyReused).toEqual([`${other.partition}:${other.offset}`]);
      expect(r2.fresh.size + r2.applied.size).toBe(0);
      // The same plant again (a sender's retry, a redelivered record) is an ordinary duplicate.
      const retry = await apply([{ ...first, offset: String(offset++) }], NO_OFFER, MAX_HOPS);
      expect(retry.keyReused).toEqual([]);
      // Within one batch, the first by offset is stored and the other reported.
      const e = event({ name: 'Palm' });
      const clash = {
        ...e,
        plantId: plantId + 1,
        name: 'Cactus',
        digest: 'digest of Cactus',
        offset: String(offset++),
      };
      const r3 = await apply([clash, e], NO_OFFER, MAX_HOPS);
      expect(r3.keyReused).toEqual([`${clash.partition}:${clash.offset}`]);
      expect([...r3.applied]).toEqual([e.eventId]);
      const { rows } = await pool.query('SELECT id, name FROM plants WHERE id = ANY($1) ORDER BY id', [
        [plantId, plantId + 1],
      ]);
      expect(rows).toEqual([{ id: plantId, name: 'Palm' }]);
    });

    it('stores but does not fan out an event that has been through MAX_WEBHOOK_HOPS deliveries', async () => {
      await subscribe();
      const looped = event({ name: 'echo', hops: MAX_HOPS, originEventId: randomUUID() });
      const r = await apply([looped], NO_OFFER, MAX_HOPS);
      expect([...r.applied]).toEqual([looped.eventId]);
      expect(r.outboxed).toBe(0);
      expect(r.suppressed).toEqual([
        { eventId: looped.eventId, plantId, hops: MAX_HOPS, originEventId: looped.originEventId },
      ]);
    });
  });

  describe('fan-out at ingest', () => {
    it("takes on the new events' deliveries while they fit the room given; the rest are left for a fan-out", async () => {
      const subs = [await subscribe(), await subscribe(), await subscribe()];
      const [first, second] = [event({ plantId }), event({ plantId: plantId + 1 })];
      const r = await apply([first, second], room(4), MAX_HOPS);
      expect(r.outboxed).toBe(2);
      expect(r.leftForFanOut).toBe(1);
      expect(r.fanned.map((d) => d.subscriptionId).sort()).toEqual([...subs].sort());
      expect(r.fanned[0]).toMatchObject({ hasRow: false, eventId: first.eventId, plantId, attempts: 0 });
      expect(r.fanned[0].secrets).toEqual(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
      const rows = await outboxRows();
      expect(rows.map((e) => [e.event_id, e.leased_until !== null, e.fanned_out_at])).toEqual([
        [first.eventId, true, null],
        [second.eventId, false, null],
      ]);
      const rest = await outbox.fanOut(100, [], LEASE_MS);
      expect(rest.claimed.map((d) => d.eventId)).toEqual([second.eventId, second.eventId, second.eventId]);
    });

    it('writes as rows what must wait, and takes no event behind an earlier one of its plant still going out', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      const v1 = event({ name: 'v1' });
      const r1 = await apply([v1], room(10, [b]), MAX_HOPS);
      expect(r1.fanned.map((d) => d.subscriptionId)).toEqual([a]);
      expect(r1.deferred).toBe(1);
      expect(r1.deferredFor).toEqual([b]);
      expect((await deliveriesOf(plantId)).map((d) => [d.subscription_id, d.status])).toEqual([[b, 'pending']]);
      // v1 is still going out to a (not recorded): v2 of the same plant is left for a fan-out, and waits.
      const r2 = await apply([event({ name: 'v2' })], room(10), MAX_HOPS);
      expect(r2.fanned).toEqual([]);
      expect(r2.leftForFanOut).toBe(1);
      expect((await outbox.fanOut(100, [], LEASE_MS)).claimed).toEqual([]);
      await succeed(r1.fanned[0], [a]);
      // Now v2 goes to a at once; to b it waits behind v1's row.
      const r3 = await outbox.fanOut(100, [], LEASE_MS);
      expect(r3.claimed.map((d) => [d.subscriptionId, JSON.parse(d.body).name])).toEqual([[a, 'v2']]);
      expect(r3.deferred).toBe(1);
    });

    it("writes no outbox event when no subscriber's filter lets it through", async () => {
      const a = await subscribe();
      await pool.query(`UPDATE subscriptions SET filter = '{"tags": ["other"]}' WHERE id = $1`, [a]);
      const r = await apply([event({ tag: 'x' })], room(10), MAX_HOPS);
      expect(r.outboxed).toBe(0);
      expect(r.leftForFanOut).toBe(0);
      expect(await outboxRows()).toEqual([]);
    });

    it("uses the caller's pairs but for subscriptions changed since its copy: those are asked here, and wait as rows", async () => {
      // Issue 36: one portal link changing its own subscription made every batch's events go the slow way (a
      // fan-out) for every subscriber until each worker reloaded. Now only the changed subscriptions' deliveries do.
      const [a, disabled, moved] = [await subscribe(), await subscribe(), await subscribe()];
      const set = await subscriptions.load();
      await pool.query('UPDATE subscriptions SET enabled = false WHERE id = $1', [disabled]); // after the copy
      await pool.query("UPDATE subscriptions SET url = 'http://moved.test/hook' WHERE id = $1", [moved]);
      const added = await subscribe();
      const e = event();
      const r = await ingest.applyEvents([e], room(10), MAX_HOPS, planFanOut([e], set, MAX_HOPS));
      expect(r.current).toBe(false); // the caller reloads
      expect(r.sending).toEqual([{ eventId: e.eventId, subscriptionId: a }]);
      expect([r.outboxed, r.leftForFanOut]).toEqual([1, 0]);
      expect([...r.deferredFor].sort()).toEqual([moved, added].sort());
      const rows = await deliveriesOf(e.plantId);
      expect(rows.map((d) => d.subscription_id).sort()).toEqual([moved, added].sort());
      // Claimed, the moved subscription's row is sent where it is now, not where the caller's copy said.
      const claimed = (await outbox.claimDue(10, [], LEASE_MS)).claimed;
      expect(claimed.find((d) => d.subscriptionId === moved)?.url).toBe('http://moved.test/hook');
    });

    it("leaves every event for a fan-out when the log no longer names every change since the caller's copy", async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      const set = await subscriptions.load();
      await pool.query('UPDATE subscriptions SET enabled = false WHERE id = $1', [b]); // after the caller's copy
      await pool.query('DELETE FROM subscription_changes'); // as when more than the last 1,000 changes passed
      const e = event();
      const r = await ingest.applyEvents([e], room(10), MAX_HOPS, planFanOut([e], set, MAX_HOPS));
      expect(r.current).toBe(false);
      expect(r.sending).toEqual([]);
      expect([r.outboxed, r.leftForFanOut]).toEqual([1, 1]);
      const fanned = await outbox.fanOut(10, [], LEASE_MS);
      expect(fanned.claimed.map((d) => d.subscriptionId)).toEqual([a]);
    });

    it("fans out from the caller's copy while it is current: the body and the credentials come from the worker", async () => {
      const a = await subscribe();
      const e = event({ name: 'Monstera', tag: 'green', extra: { colour: 'green' } });
      const r = await apply([e], room(10), MAX_HOPS);
      expect(r.current).toBe(true);
      expect(r.fanned.map((d) => [d.subscriptionId, d.eventId, JSON.parse(d.body), d.secrets])).toEqual([
        [
          a,
          e.eventId,
          { colour: 'green', id: e.plantId, name: 'Monstera', tag: 'green' },
          ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
        ],
      ]);
      // The body stored for a retry is the one sent.
      const { rows } = await pool.query('SELECT body FROM outbox_events WHERE event_id = $1', [e.eventId]);
      expect(rows[0].body).toBe(r.fanned[0].body);
    });

    // A sender's retry after a 503 whose first publish was written after all puts the event on the topic twice,
    // often in one batch: it is one event, and each subscriber is sent it once.
    it('takes on an event whose record came twice in the batch once, one delivery per subscriber', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      const e = event();
      const again = { ...e, offset: String(offset++) };
      const r = await apply([e, again], room(10), MAX_HOPS);
      expect(r.fanned.map((d) => [d.eventId, d.subscriptionId]).sort()).toEqual(
        [
          [e.eventId, a],
          [e.eventId, b],
        ].sort(),
      );
      // The statement takes each pair once whatever its caller asks.
      const set = await subscriptions.load();
      const e2 = event({ plantId: plantId + 1 });
      const plan = planFanOut([e2], set, MAX_HOPS);
      const twice = await ingest.applyEvents([e2], room(10), MAX_HOPS, {
        ...plan,
        pairs: [...plan.pairs, ...plan.pairs],
      });
      expect(twice.sending.map((p) => p.subscriptionId).sort()).toEqual([a, b].sort());
    });

    it('marks an event fanned out at once when all of its deliveries had to be written as rows', async () => {
      const a = await subscribe();
      const r = await apply([event()], room(10, [a]), MAX_HOPS);
      expect(r.fanned).toEqual([]);
      expect(r.leftForFanOut).toBe(0);
      expect((await outboxRows()).map((e) => e.fanned_out_at !== null)).toEqual([true]);
      expect((await outbox.claimDue(10, [], LEASE_MS)).claimed.map((d) => d.subscriptionId)).toEqual([a]);
    });
  });

  describe('fan-out', () => {
    it('fans an event out in memory to each enabled subscriber its filter lets through, leased once', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await subscribe(false);
      const other = await subscribe();
      await pool.query(`UPDATE subscriptions SET filter = '{"tags": ["other"]}' WHERE id = $1`, [other]);
      const e = event({ name: 'Fern', tag: 'x' });
      await apply([e], NO_OFFER, MAX_HOPS);
      const first = await outbox.fanOut(100, [], LEASE_MS);
      expect(first.claimed.map((d) => d.subscriptionId).sort()).toEqual([a, b].sort());
      expect(first.claimed[0]).toMatchObject({ hasRow: false, eventId: e.eventId, plantId, attempts: 0, hops: 0 });
      expect(first.claimed[0].secrets).toEqual(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
      expect(JSON.parse(first.claimed[0].body)).toEqual({ id: plantId, name: 'Fern', tag: 'x' });
      expect(await deliveriesOf(plantId)).toEqual([]); // nothing written before it is sent
      expect((await outbox.fanOut(100, [], LEASE_MS)).claimed).toEqual([]); // leased
      await expireLeases();
      expect((await outbox.fanOut(100, [], LEASE_MS)).claimed.map((d) => d.id).sort()).toHaveLength(2);
    });

    it('writes each delivery once with its outcome; after a crash only the unrecorded ones are sent again', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      const e = event();
      await apply([e], NO_OFFER, MAX_HOPS);
      const { claimed } = await outbox.fanOut(100, [], LEASE_MS);
      const [da, db] = [claimed.find((d) => d.subscriptionId === a)!, claimed.find((d) => d.subscriptionId === b)!];
      await succeed(da);
      // The worker dies here, b sent but not recorded: the event is not done and its lease runs out.
      await expireLeases();
      const again = await outbox.fanOut(100, [], LEASE_MS);
      expect(again.claimed.map((d) => d.subscriptionId)).toEqual([b]);
      await failOnce(again.claimed[0], [b]); // the second fan-out had b alone: its last, so the event is done
      expect((await outboxRows()).map((r) => r.fanned_out_at !== null)).toEqual([true]);
      await succeed(db); // the dead worker's attempt is recorded too (late, say): both attempts kept
      const { rows } = await pool.query(
        `SELECT subscription_id, status, attempts, body, jsonb_array_length(attempt_log) AS logged
         FROM all_deliveries WHERE event_id = $1`,
        [e.eventId],
      );
      expect(rows.find((r) => r.subscription_id === a)).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        logged: 1,
        body: null,
      });
      // A delivery still to retry carries its own body: the claims send it without the event.
      expect(rows.find((r) => r.subscription_id === b)).toMatchObject({ status: 'pending', attempts: 2, logged: 2 });
      expect(JSON.parse(rows.find((r) => r.subscription_id === b).body).id).toBe(plantId);
      expect((await outbox.fanOut(100, [], LEASE_MS)).claimed).toEqual([]);
    });

    // The common batch: every delivery sent from memory succeeded at once. The events' other deliveries, set aside
    // as rows (a subscriber over its share when the batch was handed over), are found as written, which completes
    // the events; they are not deliveries of the batch, so the batch is still written by the cheap statement.
    it('records successes by the cheap statement alone when their events have other deliveries set aside as rows', async () => {
      const [a, b, c] = [await subscribe(), await subscribe(), await subscribe()];
      const [e1, e2] = [event(), event({ plantId: plantId + 1 })];
      const r = await apply([e1, e2], room(10), MAX_HOPS);
      const of = (e: IngestEvent, s: string) =>
        r.fanned.find((d) => d.eventId === e.eventId && d.subscriptionId === s)!;
      const setAside = (d: ClaimedDelivery) =>
        outbox.record([{ delivery: d, attempt: null, outcome: { kind: 'retry', delayMs: 0 } }]);
      await setAside(of(e1, c));
      await setAside(of(e2, a));
      const sent: string[] = [];
      const recording = {
        query: (...args: Parameters<Pool['query']>) => {
          const q = args[0] as unknown as string | { text: string };
          sent.push(typeof q === 'string' ? q : q.text);
          return (pool.query as (...a: unknown[]) => unknown)(...args);
        },
      } as unknown as Pool;
      const ok = (d: ClaimedDelivery, completes?: string[]) => ({
        delivery: d,
        attempt: answeredAttempt(204),
        outcome: { kind: 'succeeded' as const },
        completes,
      });
      await new OutboxRepository(recording, box).record([
        ok(of(e1, a)),
        ok(of(e2, b)),
        ok(of(e1, b), [a, b, c]),
        ok(of(e2, c), [a, b, c]),
      ]);
      expect(sent).toEqual([FAN_OUT_SQL.statement('record-succeeded').text]);
      expect((await outboxRows()).map((x) => x.fanned_out_at !== null)).toEqual([true, true]);
      const { rows } = await pool.query(
        'SELECT event_id, subscription_id, status, attempts, appended FROM all_deliveries ORDER BY seq',
      );
      const row = (e: IngestEvent, s: string) =>
        rows.filter((x) => x.event_id === e.eventId && x.subscription_id === s).map((x) => [x.status, x.attempts]);
      expect([row(e1, a), row(e1, b), row(e1, c), row(e2, a), row(e2, b), row(e2, c)]).toEqual([
        [['succeeded', 1]],
        [['succeeded', 1]],
        [['pending', 0]],
        [['pending', 0]],
        [['succeeded', 1]],
        [['succeeded', 1]],
      ]);
    });

    it('marks an event fanned out with its last delivery only if every other one has its row', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      const e = event();
      await apply([e], NO_OFFER, MAX_HOPS);
      const { claimed } = await outbox.fanOut(100, [], LEASE_MS);
      const [da, db] = [claimed.find((d) => d.subscriptionId === a)!, claimed.find((d) => d.subscriptionId === b)!];
      // a's write failed (nothing of it stored); b is answered last and carries the event's subscribers.
      await succeed(db, [a, b]);
      expect((await outboxRows()).map((r) => r.fanned_out_at)).toEqual([null]);
      // Both in one statement: done.
      const e2 = event({ plantId: plantId + 1 });
      await apply([e2], NO_OFFER, MAX_HOPS);
      const second = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      await outbox.record(
        second.map((d, i) => ({
          delivery: d,
          attempt: answeredAttempt(204),
          outcome: { kind: 'succeeded' as const },
          completes: i === second.length - 1 ? [a, b] : undefined,
        })),
      );
      expect((await outboxRows()).map((r) => [r.event_id, r.fanned_out_at !== null])).toEqual([
        [e.eventId, false],
        [e2.eventId, true],
      ]);
      // The first event's lease runs out: a fan-out sends a's alone, and that write completes it.
      await expireLeases();
      const again = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      expect(again.map((d) => d.subscriptionId)).toEqual([a]);
      await succeed(again[0], [a]);
      expect((await outboxRows()).every((r) => r.fanned_out_at !== null)).toBe(true);
      expect(da.eventId).toBe(e.eventId);
    });

    it('keeps per-plant order when the first delivery of a fan-out fails and the next event arrives', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      const v1 = event({ name: 'v1' });
      await apply([v1], NO_OFFER, MAX_HOPS);
      const first = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      await failOnce(first.find((d) => d.subscriptionId === a)!);
      await succeed(
        first.find((d) => d.subscriptionId === b)!,
        [a, b],
      );
      await apply([event({ name: 'v2' })], NO_OFFER, MAX_HOPS);
      // b has nothing pending for the plant: v2 goes at once. a waits behind its v1 retry: written as a row.
      const second = await outbox.fanOut(100, [], LEASE_MS);
      expect(second.claimed.map((d) => [d.subscriptionId, JSON.parse(d.body).name])).toEqual([[b, 'v2']]);
      expect(second.deferred).toBe(1);
      const retry = await outbox.claimDue(10, [], LEASE_MS);
      expect(retry.claimed.map((d) => [d.subscriptionId, JSON.parse(d.body).name])).toEqual([[a, 'v1']]);
      expect(retry.more).toBe(true); // v2 for a is due but waits
      await succeed(retry.claimed[0]);
      const next = await outbox.claimDue(10, [], LEASE_MS);
      expect(next.claimed.map((d) => [d.subscriptionId, JSON.parse(d.body).name])).toEqual([[a, 'v2']]);
    });

    it("writes a saturated subscriber's deliveries as rows for the claims, in order", async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await apply([event({ plantId }), event({ plantId: plantId + 1 })], NO_OFFER, MAX_HOPS);
      const r = await outbox.fanOut(100, [b], LEASE_MS);
      expect(r.claimed.map((d) => d.subscriptionId)).toEqual([a, a]);
      expect(r.deferred).toBe(2);
      expect(r.deferredFor).toEqual([b]); // whose rows they are: the dispatcher claims for them unless b is shut
      const rows = await outbox.claimDue(10, [], LEASE_MS);
      expect(rows.claimed.map((d) => [d.subscriptionId, d.plantId, d.hasRow])).toEqual([
        [b, plantId, true],
        [b, plantId + 1, true],
      ]);
    });

    it('does not fan out an event while an earlier one of its plant is; other plants go', async () => {
      await subscribe();
      const v1 = event({ name: 'v1' });
      await apply([v1], NO_OFFER, MAX_HOPS);
      const [d1] = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      await apply([event({ name: 'v2' })], NO_OFFER, MAX_HOPS);
      await apply([event({ plantId: plantId + 1, name: 'other plant' })], NO_OFFER, MAX_HOPS);
      const meanwhile = await outbox.fanOut(100, [], LEASE_MS);
      expect(meanwhile.claimed.map((d) => JSON.parse(d.body).name)).toEqual(['other plant']);
      expect(meanwhile.more).toBe(true); // v2 waits
      await succeed(d1, [d1.subscriptionId]);
      expect((await outbox.fanOut(100, [], LEASE_MS)).claimed.map((d) => JSON.parse(d.body).name)).toEqual(['v2']);
    });

    it('takes as many events as fit the room, and an event with nothing to send is done at once', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await apply(
        Array.from({ length: 5 }, (_, i) => event({ plantId: plantId + i })),
        NO_OFFER,
        MAX_HOPS,
      );
      const r = await outbox.fanOut(5, [], LEASE_MS);
      expect(r.claimed).toHaveLength(4); // two events of two deliveries fit in five
      expect(r.more).toBe(true);
      const deferred = await outbox.fanOut(100, [a, b], LEASE_MS); // all three left written as rows
      expect(deferred.claimed).toEqual([]);
      expect(deferred.deferred).toBe(6);
      expect((await outboxRows()).filter((e) => e.fanned_out_at === null)).toHaveLength(2); // the first two
    });

    it('never hands back more than the room: an event with more subscribers has the rest written as rows', async () => {
      for (let i = 0; i < 5; i++) await subscribe();
      const e = event();
      await apply([e], NO_OFFER, MAX_HOPS);
      const r = await outbox.fanOut(3, [], LEASE_MS);
      expect(r.claimed).toHaveLength(3);
      expect(r.deferred).toBe(2);
      expect((await outbox.claimDue(10, [], LEASE_MS)).claimed).toHaveLength(2);
    });

    it('holds back only the plant with a pending delivery: another plant goes from memory to the same subscriber', async () => {
      const a = await subscribe();
      await storeAsRows([event()]); // a has a pending delivery of this plant
      await apply([event({ name: 'v2' }), event({ plantId: plantId + 1 })], NO_OFFER, MAX_HOPS);
      const r = await outbox.fanOut(100, [], LEASE_MS);
      expect(r.claimed.map((d) => [d.subscriptionId, d.plantId])).toEqual([[a, plantId + 1]]);
    });

    it('fans each event out to one replica when replicas race', async () => {
      await subscribe();
      await subscribe();
      const events = Array.from({ length: 2000 }, (_, i) => event({ plantId: plantId + i }));
      plantId += 10_000; // past these plants: later tests store new ones
      await apply(events, NO_OFFER, MAX_HOPS);
      const sent = (await race((o) => o.fanOut(50, [], 60_000))).map((d) => `${d.subscriptionId}:${d.eventId}`);
      expect(new Set(sent).size).toBe(4000);
      expect(sent).toHaveLength(4000);
    });
  });

  describe('claim', () => {
    it('leases due deliveries once: a second claim does not get them, an expired lease gives them back', async () => {
      await subscribe();
      await storeAsRows([event()]);
      const first = await outbox.claimDue(10, [], 30_000);
      expect(first.claimed).toHaveLength(1);
      expect((await outbox.claimDue(10, [], 30_000)).claimed).toEqual([]);
      await pool.query("UPDATE deliveries SET leased_until = now() - interval '1 second'");
      expect((await outbox.claimDue(10, [], 30_000)).claimed.map((d) => d.id)).toEqual([first.claimed[0].id]);
    });

    it('leases each delivery to one claimer when replicas claim at the same moment', async () => {
      // Found by the fault suite: two workers sent the same delivery within milliseconds. A claim whose snapshot
      // predates another's committed lease must not lease the row again once it gets the row lock.
      await subscribe();
      const events = Array.from({ length: 3000 }, (_, i) => event({ plantId: plantId + i }));
      plantId += 10_000; // past these plants: later tests store new ones
      await storeAsRows(events);
      const claimed = (await race((o) => o.claimDue(25, [], 60_000))).map((d) => d.id);
      const twice = claimed.filter((id, i) => claimed.indexOf(id) !== i);
      expect(new Set(claimed).size).toBe(3000);
      expect(twice).toEqual([]);
    });

    it('keeps per-plant order: the next delivery of a plant is claimable only once the earlier one is done', async () => {
      await subscribe();
      await storeAsRows([event({ name: 'v1' })]);
      await storeAsRows([event({ name: 'v2' })]);
      const first = await outbox.claimDue(10, [], 30_000);
      expect(first.claimed.map((d) => JSON.parse(d.body).name)).toEqual(['v1']);
      expect(first.more).toBe(true); // v2 is due but waits
      expect((await outbox.claimDue(10, [], 30_000)).claimed).toEqual([]);
      await succeed(first.claimed[0]);
      expect((await outbox.claimDue(10, [], 30_000)).claimed.map((d) => JSON.parse(d.body).name)).toEqual(['v2']);
    });

    it('does not wait behind another plant or another subscriber', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await storeAsRows([event({ plantId }), event({ plantId: plantId + 1 })]);
      const claimed = (await outbox.claimDue(10, [], 30_000)).claimed;
      expect(claimed.map((d) => `${d.subscriptionId}:${d.plantId}`).sort()).toEqual(
        [`${a}:${plantId}`, `${a}:${plantId + 1}`, `${b}:${plantId}`, `${b}:${plantId + 1}`].sort(),
      );
    });

    it('leaves out excluded and disabled subscribers, and honours the limit', async () => {
      const [a, b, c] = [await subscribe(), await subscribe(), await subscribe()];
      await storeAsRows([event({ plantId }), event({ plantId: plantId + 1 })]);
      await pool.query('UPDATE subscriptions SET enabled = false WHERE id = $1', [c]);
      const one = await outbox.claimDue(1, [b], 30_000);
      expect(one.claimed.map((d) => d.subscriptionId)).toEqual([a]);
      expect(one.more).toBe(true);
      const rest = await outbox.claimDue(10, [b], 30_000);
      expect(rest.claimed.map((d) => d.subscriptionId)).toEqual([a]);
      expect(rest.more).toBe(false); // c's deliveries are pending but not due while it is disabled; b's were left out
    });

    it("claims another subscriber's newer row past the older backlogs of a disabled and an excluded one", async () => {
      // Issue 35: the claim took the 8 x limit oldest due rows before it left disabled subscribers out, so a
      // disabled subscriber's backlog (a 410, the auto-disable, a portal link's PATCH, a replay) held everyone's
      // retries back for good. Now the rows of a subscriber that may not be sent to are never read.
      const [disabled, paused] = [await subscribe(), await subscribe()];
      await storeAsRows(Array.from({ length: 100 }, (_, i) => event({ plantId: plantId + i })));
      await pool.query('UPDATE subscriptions SET enabled = false WHERE id = $1', [disabled]);
      const a = await subscribe();
      await storeAsRows([event({ plantId: plantId + 500 })]);
      const claim = await outbox.claimDue(5, [paused], 30_000);
      expect(claim.claimed.map((d) => `${d.subscriptionId}:${d.plantId}`)).toEqual([`${a}:${plantId + 500}`]);
      expect(claim.more).toBe(false);
    });

    it("takes a plant's first delivery past the rows that wait behind it, and another subscriber's beside them", async () => {
      // A plant's first delivery on its back-off, then more versions of it than a claim looks at (8 x the limit):
      // they are due (written at once) but wait behind the first, and they are older than anything else due. A
      // claim that took the oldest due rows of all, then looked for their earlier deliveries only among them,
      // found nothing it could send, every time: another subscriber's row never went, nor the first delivery once
      // its back-off ended (it is newer than its followers), for good.
      await subscribe(); // the subscriber whose plant waits
      for (let v = 1; v <= 30; v += 1) await storeAsRows([event({ name: `v${v}` })]);
      const waitsFor = plantId;
      await pool.query(
        "UPDATE deliveries SET next_attempt_at = now() + interval '1 hour' WHERE plant_id = $1 AND seq = (SELECT min(seq) FROM deliveries WHERE plant_id = $1)",
        [waitsFor],
      );
      const y = await subscribe();
      await storeAsRows([event({ plantId: plantId + 1 })]);
      const claim = await outbox.claimDue(2, [], 30_000);
      const took = claim.claimed.map((d) => `${d.subscriptionId}:${d.plantId}`);
      expect(took).toContain(`${y}:${plantId + 1}`);
      expect(claim.claimed.filter((d) => d.plantId === waitsFor)).toEqual([]); // behind their first, in order
      expect(claim.more).toBe(true); // x's followers are due, and wait
      await pool.query(
        'UPDATE deliveries SET next_attempt_at = now() WHERE plant_id = $1 AND next_attempt_at > now()',
        [waitsFor],
      );
      const first = await outbox.claimDue(2, [], 30_000);
      expect(first.claimed.map((d) => JSON.parse(d.body).name)).toEqual(['v1']);
    });

    it("keeps a delivery's newest 20 attempts in its log, and counts every one", async () => {
      // Issue 36, part 1: each replay or retry added ~1 KiB to a log rewritten whole on every attempt, unbounded.
      await subscribe();
      await storeAsRows([event()]);
      const times: string[] = [];
      for (let i = 0; i < 25; i++) {
        const [d] = (await outbox.claimDue(1, [], LEASE_MS)).claimed;
        const a = answeredAttempt(503);
        times.push(a.attemptedAt);
        await outbox.record([{ delivery: d, attempt: a, outcome: { kind: 'retry', delayMs: 0 } }]);
      }
      const { rows } = await pool.query('SELECT attempts, attempt_log FROM deliveries');
      expect(rows[0].attempts).toBe(25);
      const kept = (rows[0].attempt_log as { attemptedAt: string }[]).map((x) => Date.parse(x.attemptedAt));
      expect(kept).toEqual(times.slice(5).map((t) => Date.parse(t)));
    });

    it('signs with a rotated-out secret only until its overlap ends', async () => {
      const a = await subscribe();
      await pool.query(
        "UPDATE subscriptions SET previous_secret = secret, secret = $2, previous_secret_expires_at = now() + interval '1 hour' WHERE id = $1",
        [a, box.seal('whsec_new', subscriptionContext(a))],
      );
      await storeAsRows([event({ plantId }), event({ plantId: plantId + 1 })]);
      const [d] = (await outbox.claimDue(1, [], 30_000)).claimed;
      expect(d.secrets).toEqual(['whsec_new', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
      await pool.query(
        "UPDATE subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1",
        [a],
      );
      const [later] = (await outbox.claimDue(1, [], 30_000)).claimed;
      expect(later.secrets).toEqual(['whsec_new']);
    });
  });
  describe('leases: what is done under a lease that lapsed overwrites nothing', () => {
    const leaseOf = async (id: string) =>
      (await pool.query('SELECT leased_until, lease_token FROM deliveries WHERE id = $1', [id])).rows[0];
    const rowOf = async (id: string) =>
      (
        await pool.query(
          'SELECT status, attempts, jsonb_array_length(attempt_log) AS logged, leased_until FROM deliveries WHERE id = $1',
          [id],
        )
      ).rows[0];
    const expireRows = () => pool.query("UPDATE deliveries SET leased_until = now() - interval '1 second'");

    it('a claimed row: the stale claim neither overwrites the holder’s outcome nor ends its lease', async () => {
      await subscribe();
      await storeAsRows([event()]);
      const [stale] = (await outbox.claimDue(10, [], 30_000)).claimed;
      await expireRows();
      const [holder] = (await outbox.claimDue(10, [], 30_000)).claimed;
      expect(holder.id).toBe(stale.id);
      expect(holder.lease.token).not.toBe(stale.lease.token);
      // The stale attempt is recorded first (it failed for good, say): it joins the log, changes nothing else.
      await record(stale, { kind: 'failed' });
      expect(await rowOf(stale.id)).toMatchObject({ status: 'pending', attempts: 1, logged: 1 });
      expect((await leaseOf(stale.id)).lease_token).toBe(holder.lease.token); // still the holder's
      // Neither can it renew or hand back the holder's lease.
      expect((await outbox.renewLeases([stale], 30_000)).renewed).toEqual(new Set());
      await outbox.releaseLeases([{ id: stale.id, token: stale.lease.token }]);
      expect((await outbox.claimDue(10, [], 30_000)).claimed).toEqual([]);
      await succeed(holder);
      expect(await rowOf(stale.id)).toMatchObject({ status: 'succeeded', attempts: 2, logged: 2, leased_until: null });
      // And a stale record after the holder's: the holder's outcome stays.
      await record(stale, { kind: 'retry', delayMs: 0 });
      expect(await rowOf(stale.id)).toMatchObject({ status: 'succeeded', attempts: 3, logged: 3 });
    });

    it('renews a lease its claim still holds, even once lapsed if nobody took it; hands back only its own', async () => {
      await subscribe();
      await storeAsRows([event()]);
      const [d] = (await outbox.claimDue(10, [], 30_000)).claimed;
      await expireRows();
      const renewed = await outbox.renewLeases([d], 30_000);
      expect(renewed.renewed).toEqual(new Set([d.id]));
      expect(renewed.until).toBeGreaterThan(Date.now() + 25_000);
      expect((await outbox.claimDue(10, [], 30_000)).claimed).toEqual([]); // held again
      await outbox.releaseLeases([{ id: d.id, token: d.lease.token }]);
      expect((await outbox.claimDue(10, [], 30_000)).claimed.map((c) => c.id)).toEqual([d.id]);
    });

    it('an event fanned out again after its lease lapsed: the stale worker writes no row and completes nothing', async () => {
      const [a] = [await subscribe()];
      const e = event();
      await apply([e], NO_OFFER, MAX_HOPS);
      const [stale] = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      await expireLeases();
      const [holder] = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      expect(holder.subscriptionId).toBe(a);
      // The stale worker's renewal is refused: it does not send.
      expect((await outbox.renewLeases([stale], LEASE_MS)).renewed).toEqual(new Set());
      // Had it sent and recorded anyway (a failure, say), before the holder: no row, the event not done.
      await record(stale, { kind: 'failed' }, [a]);
      expect(await deliveriesOf(plantId)).toEqual([]);
      expect((await outboxRows()).map((r) => r.fanned_out_at)).toEqual([null]);
      expect((await outbox.renewLeases([holder], LEASE_MS)).renewed).toEqual(new Set([holder.id]));
      await succeed(holder, [a]);
      expect(await deliveriesOf(plantId)).toMatchObject([{ subscription_id: a, status: 'succeeded' }]);
      expect((await outboxRows()).map((r) => r.fanned_out_at !== null)).toEqual([true]);
      // The stale attempt recorded after the holder's joins the log; the status stays the holder's.
      await record(stale, { kind: 'failed' }, [a]);
      const { rows } = await pool.query(
        'SELECT status, attempts, jsonb_array_length(attempt_log) AS logged FROM all_deliveries WHERE event_id = $1',
        [e.eventId],
      );
      expect(rows).toEqual([{ status: 'succeeded', attempts: 2, logged: 2 }]);
      // Nor can it hand the event back: it is done.
      await outbox.releaseLeases([], [{ id: e.eventId, token: stale.lease.token }]);
      expect((await outboxRows()).map((r) => r.fanned_out_at !== null)).toEqual([true]);
    });

    it('stores a reply holding a NUL, made storable, beside ordinary ones in one statement', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await storeAsRows([event()]);
      const claimed = (await outbox.claimDue(10, [], 30_000)).claimed;
      const e2 = event({ plantId: plantId + 1 });
      await apply([e2], NO_OFFER, MAX_HOPS);
      const fanned = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
      const reply = (d: ClaimedDelivery) => (d.subscriptionId === a ? 'O\u0000K\u0000' : 'fine');
      await outbox.record(
        [...claimed, ...fanned].map((d, i, all) => ({
          delivery: d,
          attempt: {
            ...answeredAttempt(200),
            responseBody: reply(d),
            error: d.subscriptionId === a ? 'bad\u0000' : null,
          },
          outcome: { kind: 'succeeded' as const },
          completes: i === all.length - 1 ? [a, b] : undefined,
        })),
      );
      const { rows } = await pool.query(
        `SELECT subscription_id, status, attempt_log->0->>'responseBody' AS reply, attempt_log->0->>'error' AS error
         FROM all_deliveries ORDER BY plant_id, subscription_id`,
      );
      expect({ rows, claimed: claimed.length, fanned: fanned.length }).toMatchObject({ claimed: 2, fanned: 2 });
      expect(rows).toHaveLength(4);
      for (const r of rows)
        expect(r).toEqual({
          subscription_id: r.subscription_id,
          status: 'succeeded',
          reply: r.subscription_id === a ? 'O\\u0000K\\u0000' : 'fine',
          error: r.subscription_id === a ? 'bad\\u0000' : null,
        });
      expect((await outboxRows()).every((r) => r.fanned_out_at !== null)).toBe(true);
    });
  });
});
