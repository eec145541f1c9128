import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { IngestEvent, NO_LEASE, OutboxLease } from '@app/delivery';
import { IngestRepository, OutboxRepository, runMigrations, SecretBox, subscriptionContext } from '@app/persistence';
import * as e2e from './support/stack';

// The two hardest statements, against the real PostgreSQL, in a database of their own (a claim sees every
// pending delivery, so other suites' rows must not be there): the ingest statement (events, plants and the
// outbox in one) and the claim.
const MAX_HOPS = 10;
const LEASE: OutboxLease = { limit: 100, skipSubscriptions: [], leaseMs: 30_000 };
const box = new SecretBox(randomBytes(32));

describe('the ingest statement and the claim', () => {
  let db: e2e.ScratchDatabase;
  let pool: Pool;
  let ingest: IngestRepository;
  let outbox: OutboxRepository;
  let offset = 0;
  let plantId = 1000;

  const event = (over: Partial<IngestEvent> = {}): IngestEvent => {
    const eventId = randomUUID();
    return {
      eventId,
      plantId: over.plantId ?? plantId,
      name: 'Fern',
      tag: null,
      extra: {},
      eventTime: new Date().toISOString(),
      topic: 'plant.created',
      partition: 0,
      offset: String(offset++),
      hops: 0,
      originEventId: eventId,
      traceparent: null,
      digest: `digest of ${over.name ?? 'Fern'}`,
      ...over,
    };
  };
  const subscribe = async (enabled = true): Promise<string> => {
    const id = randomUUID();
    const secret = box.seal('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', subscriptionContext(id));
    await pool.query(
      "INSERT INTO subscriptions (id, url, secret, enabled) VALUES ($1, 'http://receiver.test/hook', $2, $3)",
      [id, secret, enabled],
    );
    return id;
  };
  const deliveriesOf = async (plant: number) =>
    (
      await pool.query(
        'SELECT subscription_id, event_id, status, leased_until FROM deliveries WHERE plant_id = $1 ORDER BY seq',
        [plant],
      )
    ).rows;
  const succeed = (id: string) =>
    outbox.recordAttempts([
      {
        deliveryId: id,
        attempt: { attemptedAt: new Date().toISOString(), status: 204, latencyMs: 1, error: null, responseBody: null },
        outcome: { kind: 'succeeded' },
      },
    ]);

  beforeAll(async () => {
    db = await e2e.scratchDatabase('outbox');
    pool = db.pool;
    await runMigrations(pool);
    ingest = new IngestRepository(pool, box);
    outbox = new OutboxRepository(pool, box);
  });

  afterAll(() => db?.drop());

  beforeEach(async () => {
    plantId += 1000;
    await pool.query('DELETE FROM deliveries; DELETE FROM subscriptions');
  });

  describe('ingest', () => {
    it('applies an event id once, however often it comes', async () => {
      const e = event();
      const first = await ingest.applyEvents([e, { ...e, offset: String(offset++) }], NO_LEASE, MAX_HOPS);
      const again = await ingest.applyEvents([e], NO_LEASE, MAX_HOPS);
      expect([...first.fresh]).toEqual([e.eventId]);
      expect([...first.applied]).toEqual([e.eventId]);
      expect(again.fresh.size + again.applied.size).toBe(0);
    });

    it('keeps the latest event of a plant, in a batch and across batches; an older one is stale', async () => {
      const t = Date.now();
      const older = event({ name: 'Old', eventTime: new Date(t - 1000).toISOString() });
      const newer = event({ name: 'New', eventTime: new Date(t).toISOString() });
      const r = await ingest.applyEvents([newer, older], NO_LEASE, MAX_HOPS);
      expect([...r.applied]).toEqual([newer.eventId]);
      const late = event({ name: 'Late but older', eventTime: new Date(t - 500).toISOString() });
      const stale = await ingest.applyEvents([late], NO_LEASE, MAX_HOPS);
      expect([...stale.fresh]).toEqual([late.eventId]);
      expect(stale.applied.size).toBe(0);
      const { rows } = await pool.query('SELECT name, last_event_id FROM plants WHERE id = $1', [plantId]);
      expect(rows[0]).toEqual({ name: 'New', last_event_id: newer.eventId });
    });

    it('writes one delivery per enabled subscription for a change, none for the same data again', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await subscribe(false);
      const r = await ingest.applyEvents([event({ name: 'Fern', tag: 'x' })], NO_LEASE, MAX_HOPS);
      expect(r.deliveries).toBe(2);
      expect((await deliveriesOf(plantId)).map((d) => d.subscription_id).sort()).toEqual([a, b].sort());
      const same = event({ name: 'Fern', tag: 'x' });
      const echo = await ingest.applyEvents([same], NO_LEASE, MAX_HOPS);
      expect([...echo.unchanged]).toEqual([same.eventId]);
      expect(echo.deliveries).toBe(0);
    });

    it('leases up to the room given, never for a skipped subscriber or behind a pending delivery of the plant', async () => {
      const [a, b, c] = [await subscribe(), await subscribe(), await subscribe()];
      const first = await ingest.applyEvents(
        [event({ name: 'v1' })],
        { ...LEASE, limit: 2, skipSubscriptions: [c] },
        MAX_HOPS,
      );
      expect(first.deliveries).toBe(3);
      expect(first.leased).toHaveLength(2);
      expect(first.leased.map((d) => d.subscriptionId).sort()).toEqual([a, b].sort());
      expect(first.leased[0]).toMatchObject({ plantId, url: 'http://receiver.test/hook', attempts: 0, hops: 0 });
      expect(first.leased[0].secrets).toEqual(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
      // v1 is still pending for every subscriber: v2 must wait behind it, so nothing is leased.
      const second = await ingest.applyEvents([event({ name: 'v2' })], LEASE, MAX_HOPS);
      expect(second.deliveries).toBe(3);
      expect(second.leased).toEqual([]);
    });

    it('reports, and does not store, an event id that comes again with another plant (a reused key)', async () => {
      const first = event({ name: 'Fern' });
      const r1 = await ingest.applyEvents([first], NO_LEASE, MAX_HOPS);
      expect(r1.keyReused).toEqual([]);
      // Another replica accepted the same key with another plant: same event id, another digest.
      const other = { ...first, name: 'Not a fern', digest: 'digest of Not a fern', offset: String(offset++) };
      const r2 = await ingest.applyEvents([other], NO_LEASE, MAX_HOPS);
      expect(r2.keyReused).toEqual([`${other.partition}:${other.offset}`]);
      expect(r2.fresh.size + r2.applied.size).toBe(0);
      // The same plant again (a sender's retry, a redelivered record) is an ordinary duplicate.
      const retry = await ingest.applyEvents([{ ...first, offset: String(offset++) }], NO_LEASE, MAX_HOPS);
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
      const r3 = await ingest.applyEvents([clash, e], NO_LEASE, MAX_HOPS);
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
      const r = await ingest.applyEvents([looped], LEASE, MAX_HOPS);
      expect([...r.applied]).toEqual([looped.eventId]);
      expect(r.deliveries).toBe(0);
      expect(r.suppressed).toEqual([
        { eventId: looped.eventId, plantId, hops: MAX_HOPS, originEventId: looped.originEventId },
      ]);
    });
  });

  describe('claim', () => {
    it('leases due deliveries once: a second claim does not get them, an expired lease gives them back', async () => {
      await subscribe();
      await ingest.applyEvents([event()], NO_LEASE, MAX_HOPS);
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
      await ingest.applyEvents(events, NO_LEASE, MAX_HOPS);
      const claimers = Array.from({ length: 4 }, () => new Pool({ connectionString: db.url, max: 2 }));
      const claimed: string[] = [];
      await Promise.all(
        claimers.flatMap((p) => {
          const o = new OutboxRepository(p, box);
          return [0, 1].map(async () => {
            for (;;) {
              const r = await o.claimDue(25, [], 60_000);
              claimed.push(...r.claimed.map((d) => d.id));
              if (r.claimed.length === 0 && !r.more) return;
            }
          });
        }),
      );
      await Promise.all(claimers.map((p) => p.end()));
      const twice = claimed.filter((id, i) => claimed.indexOf(id) !== i);
      expect(new Set(claimed).size).toBe(3000);
      expect(twice).toEqual([]);
    });

    it('keeps per-plant order: the next delivery of a plant is claimable only once the earlier one is done', async () => {
      await subscribe();
      await ingest.applyEvents([event({ name: 'v1' })], NO_LEASE, MAX_HOPS);
      await ingest.applyEvents([event({ name: 'v2' })], NO_LEASE, MAX_HOPS);
      const first = await outbox.claimDue(10, [], 30_000);
      expect(first.claimed.map((d) => JSON.parse(d.body).name)).toEqual(['v1']);
      expect(first.more).toBe(true); // v2 is due but waits
      expect((await outbox.claimDue(10, [], 30_000)).claimed).toEqual([]);
      await succeed(first.claimed[0].id);
      expect((await outbox.claimDue(10, [], 30_000)).claimed.map((d) => JSON.parse(d.body).name)).toEqual(['v2']);
    });

    it('does not wait behind another plant or another subscriber', async () => {
      const [a, b] = [await subscribe(), await subscribe()];
      await ingest.applyEvents([event({ plantId }), event({ plantId: plantId + 1 })], NO_LEASE, MAX_HOPS);
      const claimed = (await outbox.claimDue(10, [], 30_000)).claimed;
      expect(claimed.map((d) => `${d.subscriptionId}:${d.plantId}`).sort()).toEqual(
        [`${a}:${plantId}`, `${a}:${plantId + 1}`, `${b}:${plantId}`, `${b}:${plantId + 1}`].sort(),
      );
    });

    it('leaves out excluded and disabled subscribers, and honours the limit', async () => {
      const [a, b, c] = [await subscribe(), await subscribe(), await subscribe()];
      await ingest.applyEvents([event({ plantId }), event({ plantId: plantId + 1 })], NO_LEASE, MAX_HOPS);
      await pool.query('UPDATE subscriptions SET enabled = false WHERE id = $1', [c]);
      const one = await outbox.claimDue(1, [b], 30_000);
      expect(one.claimed.map((d) => d.subscriptionId)).toEqual([a]);
      expect(one.more).toBe(true);
      const rest = await outbox.claimDue(10, [b], 30_000);
      expect(rest.claimed.map((d) => d.subscriptionId)).toEqual([a]);
      expect(rest.more).toBe(false); // c's deliveries are pending but not due while it is disabled; b's were left out
    });

    it('signs with a rotated-out secret only until its overlap ends', async () => {
      const a = await subscribe();
      await pool.query(
        "UPDATE subscriptions SET previous_secret = secret, secret = $2, previous_secret_expires_at = now() + interval '1 hour' WHERE id = $1",
        [a, box.seal('whsec_new', subscriptionContext(a))],
      );
      await ingest.applyEvents([event({ plantId }), event({ plantId: plantId + 1 })], NO_LEASE, MAX_HOPS);
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
});
