import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { AttemptOutcome, ClaimedDelivery, IngestEvent, NO_OFFER, planFanOut } from '@app/delivery';
import {
  IngestRepository,
  OutboxRepository,
  RetentionRepository,
  runMigrations,
  SecretBox,
  SubscriptionRepository,
} from '@app/persistence';
import * as e2e from '../../tools/harness/stack';
import { adminClient } from '../../tools/harness/admin';
import { answeredAttempt, insertSubscription } from '../fixtures/stored-rows';

// The append-only delivery log (migration 21) against the real PostgreSQL, in a database of its own, read through a
// real gateway: deliveries that succeed at once are appended to a day-partitioned table, the others are mutable
// rows, and the admin API lists both as one. What a crash between the append and the event's mark leaves, paging
// across the two tables, and dropping a day's partition while listings run.
const LEASE_MS = 30_000;
const DAY_MS = 86_400_000;

describe('the delivery log', () => {
  let db: e2e.ScratchDatabase;
  let pool: Pool;
  let gateway: e2e.RunningGateway;
  let admin: ReturnType<typeof adminClient>;
  let ingest: IngestRepository;
  let outbox: OutboxRepository;
  let subscriptions: SubscriptionRepository;
  const box = new SecretBox(randomBytes(32));
  let plantId = 7_000_000;
  let offset = 0;

  const event = (plant = plantId): IngestEvent => {
    const eventId = randomUUID();
    return {
      ...{ eventId, plantId: plant, name: `Fern ${randomBytes(3).toString('hex')}`, tag: null, extra: {} },
      ...{ eventTime: new Date().toISOString(), topic: 'plant.created', partition: 0, offset: String(offset++) },
      ...{ hops: 0, originEventId: eventId, traceparent: null, digest: randomUUID() },
    };
  };
  /** Stored as a worker stores them: fanned out to the subscriptions as they are now (its copy of them). */
  const store = async (events: IngestEvent[]) =>
    ingest.applyEvents(events, NO_OFFER, 10, planFanOut(events, await subscriptions.load(), 10));
  const subscribe = () => insertSubscription(pool, box);
  const record = (o: OutboxRepository, d: ClaimedDelivery, outcome: AttemptOutcome, completes?: string[]) =>
    o.record([
      {
        delivery: d,
        attempt: answeredAttempt(204),
        outcome,
        completes,
      },
    ]);
  const expireLeases = () =>
    pool.query("UPDATE outbox_events SET leased_until = now() - interval '1 second' WHERE fanned_out_at IS NULL");
  /** Every page of the listing, following its cursor: each page's ids. */
  const pages = async (query: string, limit: number): Promise<string[][]> => {
    const all: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await admin.call('GET', `/deliveries?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      all.push(res.body.items.map((d: { id: string }) => d.id));
      cursor = res.body.nextCursor ?? null;
    } while (cursor);
    return all;
  };

  beforeAll(async () => {
    // Its gateway checks that the topics exist and no worker of its own creates them: run alone on a fresh broker
    // (npm test -- test/delivery/delivery-log.e2e-spec.ts), it waited out the hook's 60 s for them.
    await e2e.prepareTestInfrastructure();
    db = await e2e.scratchDatabase('delivery_log');
    pool = db.pool;
    await runMigrations(pool);
    ingest = new IngestRepository(pool, box);
    outbox = new OutboxRepository(pool, box);
    subscriptions = new SubscriptionRepository(pool, box);
    gateway = await e2e.startGateway(e2e.baseEnv({ DATABASE_URL: db.url }));
    admin = adminClient(gateway.url);
  });

  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });

  beforeEach(async () => {
    plantId += 1000;
    await pool.query('UPDATE subscriptions SET enabled = false'); // each test fans out to its own subscribers
  });

  it('a crash between the append and the mark: each delivery listed once, the unrecorded one sent again', async () => {
    const [a, b] = [await subscribe(), await subscribe()];
    const e = event();
    await store([e]);
    const { claimed } = await outbox.fanOut(100, [], LEASE_MS);
    const first = (s: string) => claimed.find((d) => d.subscriptionId === s)!;
    // a's success is appended; the event is not marked (b is not answered yet)...
    await record(outbox, first(a), { kind: 'succeeded' });
    // ...and its record is written again, as after an answer lost with the statement committed: one row, two attempts.
    await record(outbox, first(a), { kind: 'succeeded' });
    // The worker dies before b's record: the event's lease runs out, and the next fan-out sends b alone.
    await expireLeases();
    const again = await outbox.fanOut(100, [], LEASE_MS);
    expect(again.claimed.map((d) => d.subscriptionId)).toEqual([b]);
    await record(outbox, again.claimed[0], { kind: 'succeeded' }, [b]);
    // The dead worker's own send of b is recorded late: it joins b's row, which the new holder appended.
    await record(outbox, first(b), { kind: 'succeeded' });
    expect((await outbox.fanOut(100, [], LEASE_MS)).claimed).toEqual([]);
    const done = await pool.query('SELECT fanned_out_at FROM outbox_events WHERE event_id = $1', [e.eventId]);
    expect(done.rows[0].fanned_out_at).not.toBeNull();

    const listed = [...(await admin.deliveriesOf(a)), ...(await admin.deliveriesOf(b))];
    expect(listed.map((d) => [d.status, d.plantId])).toEqual([
      ['succeeded', plantId],
      ['succeeded', plantId],
    ]);
    for (const d of listed) {
      const page = await admin.call('GET', `/deliveries/${d.id}`);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ eventId: e.eventId, status: 'succeeded', attempts: 2 });
      expect(page.body.attemptLog).toHaveLength(2);
      expect(JSON.parse(page.body.request.body)).toMatchObject({ id: plantId, name: e.name });
    }
    const appended = await pool.query('SELECT count(*)::int AS n FROM delivery_log WHERE event_id = $1', [e.eventId]);
    const mutable = await pool.query('SELECT count(*)::int AS n FROM deliveries WHERE event_id = $1', [e.eventId]);
    expect([appended.rows[0].n, mutable.rows[0].n]).toEqual([2, 0]);
  });

  it('pages across mutable and appended rows in one order, none skipped nor repeated', async () => {
    const sub = await subscribe();
    // Twelve plants: their deliveries succeed at once (appended) or not (mutable rows), interleaved.
    const events = Array.from({ length: 12 }, (_, i) => event(plantId + i));
    await store(events);
    const { claimed } = await outbox.fanOut(100, [], LEASE_MS);
    expect(claimed).toHaveLength(12);
    for (const [i, d] of claimed.entries()) {
      const outcome: AttemptOutcome =
        i % 3 === 0 ? { kind: 'retry', delayMs: 60_000 } : i % 3 === 1 ? { kind: 'succeeded' } : { kind: 'failed' };
      await record(outbox, d, outcome, [sub]);
    }
    const where = await pool.query(
      'SELECT appended, count(*)::int AS n FROM all_deliveries WHERE subscription_id = $1 GROUP BY 1 ORDER BY 1',
      [sub],
    );
    expect(where.rows).toEqual([
      { appended: false, n: 8 },
      { appended: true, n: 4 },
    ]);
    const expected = async () =>
      (await pool.query('SELECT id FROM all_deliveries WHERE subscription_id = $1 ORDER BY seq DESC', [sub])).rows.map(
        (r) => r.id,
      );

    const order = await expected();
    const walked = await pages(`&subscriptionId=${sub}`, 5);
    expect(walked.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(walked.flat()).toEqual(order);

    // Between two pages a failed one is retried (mutable, in place) and a new delivery is appended: the walk goes on
    // in the same order, and the new one, newer than the first page, is not in a later one.
    const firstPage = await admin.call('GET', `/deliveries?subscriptionId=${sub}&limit=5`);
    const failed = await pool.query(
      "SELECT id FROM deliveries WHERE subscription_id = $1 AND status = 'failed' ORDER BY seq LIMIT 1",
      [sub],
    );
    expect((await admin.call('POST', `/deliveries/${failed.rows[0].id}/retry`)).status).toBe(202);
    const late = event(plantId + 100);
    await store([late]);
    const [d] = (await outbox.fanOut(100, [], LEASE_MS)).claimed;
    await record(outbox, d, { kind: 'succeeded' }, [sub]);
    let rest: string[] = [];
    let cursor: string | undefined = firstPage.body.nextCursor;
    while (cursor) {
      const res = await admin.call('GET', `/deliveries?subscriptionId=${sub}&limit=5&cursor=${cursor}`);
      rest = [...rest, ...res.body.items.map((x: { id: string }) => x.id)];
      cursor = res.body.nextCursor;
    }
    expect([...firstPage.body.items.map((x: { id: string }) => x.id), ...rest]).toEqual(order);

    // A status filter spans both tables too: succeeded rows appended, and one that succeeded on a retry (mutable).
    await pool.query(
      "UPDATE deliveries SET next_attempt_at = now() WHERE subscription_id = $1 AND status = 'pending'",
      [sub],
    );
    const due = await outbox.claimDue(1, [], LEASE_MS);
    await record(outbox, due.claimed[0], { kind: 'succeeded' });
    const succeeded = await pool.query(
      "SELECT id FROM all_deliveries WHERE subscription_id = $1 AND status = 'succeeded' ORDER BY seq DESC",
      [sub],
    );
    expect(succeeded.rows).toHaveLength(6);
    expect((await pages(`&subscriptionId=${sub}&status=succeeded`, 4)).flat()).toEqual(succeeded.rows.map((r) => r.id));
  });

  it('drops a past day while listings run: each page whole or without that day, never an error', async () => {
    const sub = await subscribe();
    const maintenance = new Pool({ connectionString: db.url, max: 1 });
    const retention = new RetentionRepository(maintenance);
    // Two days past a 30-day window, ten deliveries each, numbered after everything else: the newest page holds them.
    const days = [40, 39].map((n) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10));
    await pool.query('SELECT delivery_log_add_partitions($1::date, $2::date)', days);
    for (const day of days)
      await pool.query(
        `INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, attempt_log, created_at, updated_at)
         SELECT gen_random_uuid(), $1, 'old-' || $2 || '-' || g, g, $2::timestamptz, '[]', $2::timestamptz + interval '1 hour',
                $2::timestamptz + interval '1 hour'
         FROM generate_series(1, 10) g`,
        [sub, day],
      );
    const old = await pool.query(
      "SELECT id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM delivery_log WHERE subscription_id = $1",
      [sub],
    );
    const dayOf = new Map(old.rows.map((r) => [r.id as string, r.day as string]));
    const someOld = old.rows[0].id as string;

    let listing = true;
    const seen: { status: number; ids: string[] }[] = [];
    const pageStatuses: number[] = [];
    const readers = [0, 1, 2].map(async (i) => {
      while (listing) {
        if (i === 2) {
          pageStatuses.push((await admin.call('GET', `/deliveries/${someOld}`)).status);
        } else {
          const res = await admin.call('GET', `/deliveries?limit=50`);
          seen.push({
            status: res.status,
            ids: res.status === 200 ? res.body.items.map((d: { id: string }) => d.id) : [],
          });
        }
      }
    });
    await new Promise((r) => setTimeout(r, 200)); // listings under way
    const done = await retention.maintainLog(Date.now(), new Date(Date.now() - 30 * DAY_MS), 7);
    await new Promise((r) => setTimeout(r, 200)); // and after
    listing = false;
    await Promise.all(readers);
    await maintenance.end();

    expect(done?.dropped.map((d) => d.day)).toEqual(days.map((d) => d.replaceAll('-', '')));
    expect(seen.length).toBeGreaterThan(2);
    expect(new Set(seen.map((s) => s.status))).toEqual(new Set([200]));
    expect(new Set(pageStatuses).size).toBeGreaterThan(0);
    expect([...new Set(pageStatuses)].every((s) => s === 200 || s === 404)).toBe(true);
    for (const s of seen) {
      // Of each day, all ten rows or none: a page reads one snapshot, and a day goes whole.
      for (const day of days) expect([0, 10]).toContain(s.ids.filter((id) => dayOf.get(id) === day).length);
    }
    expect(seen[0].ids.filter((id) => dayOf.has(id))).toHaveLength(20);
    expect(seen[seen.length - 1].ids.filter((id) => dayOf.has(id))).toHaveLength(0);
    expect((await admin.call('GET', `/deliveries/${someOld}`)).status).toBe(404);
    const tables = await pool.query('SELECT count(*)::int AS n FROM pg_class WHERE relname = ANY($1)', [
      days.map((d) => `delivery_log_${d.replaceAll('-', '')}`),
    ]);
    expect(tables.rows[0].n).toBe(0);
  });
});
