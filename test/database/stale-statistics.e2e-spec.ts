import { randomBytes } from 'node:crypto';
import { Pool, PoolClient } from 'pg';
import { NO_OFFER, planFanOut } from '@app/delivery';
import { IngestRepository, OutboxRepository, runMigrations, SecretBox, SubscriptionRepository } from '@app/persistence';
import { answeredAttempt, ingestEvent, insertSubscription } from '../fixtures/stored-rows';
import * as e2e from '../../tools/harness/stack';

// The hot statements read the rows they need by key, whatever the planner believes about the tables. In a database
// of its own with autovacuum off, the statistics are those of small tables (ANALYZE'd while nearly empty) and the
// tables then grow: as a new deployment's do in its first minute, or as a backlog does between two autovacuums.
// Joined the other way round, the claim read every pending row of a subscriber it skipped, and the ingest statement
// every stored plant and event id, on every call (bench:noisy-neighbour). Each test counts the rows a statement
// read (pg_stat_xact_user_tables, before and after it) and fails past a bound far below the tables' size.
const LEASE_MS = 30_000;
const BACKLOG = 3000;
const box = new SecretBox(randomBytes(32));

describe('the hot statements under stale statistics', () => {
  let db: e2e.ScratchDatabase;
  let pool: Pool;
  let offset = 0;
  let plantId = 1;

  const event = () => ingestEvent(plantId++, offset++);
  const subscribe = () => insertSubscription(pool, box);
  /** Stores `n` events on `client`, left to the fan-out (nobody took them on). */
  const store = async (client: Pool | PoolClient, n: number) => {
    const ingest = new IngestRepository(client as Pool, box);
    const set = await new SubscriptionRepository(pool, box).load();
    for (let left = n; left > 0; left -= 500) {
      const events = Array.from({ length: Math.min(500, left) }, event);
      await ingest.applyEvents(events, NO_OFFER, 10, planFanOut(events, set, 10));
    }
  };
  /** Stores `n` events and writes every delivery they owe as a pending row (each subscriber saturated). */
  const storeAsRows = async (n: number) => {
    await store(pool, n);
    const all = (await pool.query<{ id: string }>('SELECT id FROM subscriptions')).rows.map((r) => r.id);
    const outbox = new OutboxRepository(pool, box);
    while ((await outbox.fanOut(10_000, all, LEASE_MS)).more);
  };
  /**
   * Rows of `tables` that `run` read on `client` (rolled back; `then` runs before the rollback, not counted). The
   * counters are the backend's own, which include what its earlier transactions read and has not reported yet:
   * the difference is `run`'s.
   */
  const rowsRead = async (
    client: PoolClient,
    tables: string[],
    run: () => Promise<unknown>,
    then?: () => Promise<unknown>,
  ) => {
    const read = async () => {
      const { rows } = await client.query<{ read: string }>(
        'SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0) AS read ' +
          'FROM pg_stat_xact_user_tables WHERE relname = ANY($1)',
        [tables],
      );
      return Number(rows[0].read);
    };
    await client.query('BEGIN');
    try {
      const before = await read();
      await run();
      const readByRun = (await read()) - before;
      await then?.();
      return readByRun;
    } finally {
      await client.query('ROLLBACK');
    }
  };

  /**
   * `run` with a connection of its own under a 20 s statement timeout (a plan as bad as those found fails here, not
   * after minutes) and a repository on it.
   */
  const onOwnClient = async (run: (client: PoolClient, outbox: OutboxRepository) => Promise<void>) => {
    const client = await pool.connect();
    try {
      await client.query("SET statement_timeout = '20s'");
      await run(client, new OutboxRepository(client as unknown as Pool, box));
    } finally {
      await client.query('RESET statement_timeout');
      client.release();
    }
  };

  beforeAll(async () => {
    db = await e2e.scratchDatabase('stale_stats');
    pool = db.pool;
    await runMigrations(pool);
    for (const t of ['deliveries', 'plants', 'processed_events', 'outbox_events'])
      await pool.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false)`);
  });
  afterAll(() => db?.drop());

  it("reads none of a skipped subscriber's backlog when claiming another's rows", async () => {
    const noisy = await subscribe();
    await storeAsRows(5);
    await pool.query('ANALYZE');
    await storeAsRows(BACKLOG); // after the statistics: the planner believes in a handful of pending rows
    const others = [await subscribe(), await subscribe()];
    await storeAsRows(3); // three rows for each subscriber, the noisy one's among them
    await onOwnClient(async (client, outbox) => {
      let claimed = 0;
      const read = await rowsRead(client, ['deliveries'], async () => {
        claimed = (await outbox.claimDue(1000, [noisy], LEASE_MS)).claimed.length;
      });
      expect(claimed).toBe(3 * others.length);
      expect(read).toBeLessThan(50);
    });
  });

  it('claims by key when the statistics say the table is empty and it holds a backlog', async () => {
    // Found by the statements' eight-claimer race, which hung one fresh clone in two: the rows of an earlier test
    // were deleted and ANALYZE then saw pages but no rows, so the planner believed every scan of deliveries
    // returns one row, and each index on it cost the same. The claim then found each candidate by scanning a
    // partial index whole, and handed replays back by joining the table to its candidates: for 3,000 rows, a
    // claim ran for minutes. A drained queue in production is analysed the same way before its next burst.
    await pool.query('DELETE FROM deliveries; DELETE FROM subscriptions');
    await subscribe();
    await storeAsRows(50);
    await pool.query('DELETE FROM deliveries');
    await pool.query('ANALYZE deliveries');
    await storeAsRows(BACKLOG);
    // Half of them leased, as racing claimers leave them.
    await pool.query(
      "UPDATE deliveries SET leased_until = now() + interval '1 minute', lease_token = gen_random_uuid() " +
        'WHERE id = ANY (ARRAY(SELECT id FROM deliveries ORDER BY seq LIMIT $1))',
      [BACKLOG / 2],
    );
    await onOwnClient(async (client, outbox) => {
      let claimed = 0;
      const read = await rowsRead(client, ['deliveries'], async () => {
        claimed = (await outbox.claimDue(25, [], LEASE_MS)).claimed.length;
      });
      expect(claimed).toBe(25);
      // A few passes over the backlog at worst (the candidates' scan passes the leased rows; the plant heads and
      // the lock are one scan each), never one per candidate: that read 25 x 3,000 rows twice, or timed out.
      expect(read).toBeLessThan(4 * BACKLOG);
    });
  });

  it('fans out a burst by key when the statistics say the outbox is empty', async () => {
    // The fan-out, as the claim: with the outbox analysed while empty, it looked its candidates up by a scan each
    // and joined 3,000 events to their 3,000 pairs row by row, 30 s a call.
    await pool.query('DELETE FROM deliveries; DELETE FROM subscriptions; DELETE FROM outbox_events');
    await pool.query('ANALYZE outbox_events');
    const all = [await subscribe()];
    await store(pool, BACKLOG);
    await onOwnClient(async (client, outbox) => {
      let more = true;
      const read = await rowsRead(client, ['outbox_events'], async () => {
        more = (await outbox.fanOut(10_000, all, LEASE_MS)).more;
      });
      expect(more).toBe(false); // every event written as a row for its (saturated) subscriber
      // The candidates' scan, the plants' first events, the lock and the lease: a pass each, not one per event.
      expect(read).toBeLessThan(6 * BACKLOG);
    });
  });

  it.each([
    ['a success, appended to the log', { kind: 'succeeded' } as const, 204],
    ['a retry, written as a row', { kind: 'retry', delayMs: 60_000 } as const, 503],
  ])(
    'records deliveries sent from memory in a few passes, not one per record, on stale statistics: %s',
    async (_what, outcome, status) => {
      // The claim's and the fan-out's class, in the third hot statement: the record of what was sent from memory
      // locks its events, looks for what is written of them and marks them fanned out. Planned on every call
      // (sent unnamed), it meets the same statistics: a drained outbox and queue analysed empty, then a burst.
      await pool.query('DELETE FROM deliveries; DELETE FROM subscriptions; DELETE FROM outbox_events');
      await pool.query('ANALYZE outbox_events; ANALYZE deliveries');
      const subscriber = await subscribe();
      await storeAsRows(BACKLOG); // 3,000 events fanned out and 3,000 rows waiting, behind the statistics' back
      await store(pool, 25);
      const { claimed } = await new OutboxRepository(pool, box).fanOut(25, [], LEASE_MS);
      expect(claimed).toHaveLength(25); // sent from memory: no row yet, each its event's last
      await onOwnClient(async (client, outbox) => {
        const attempt = answeredAttempt(status);
        const read = await rowsRead(
          client,
          ['outbox_events', 'deliveries'],
          () => outbox.record(claimed.map((delivery) => ({ delivery, attempt, outcome, completes: [subscriber] }))),
          async () => {
            const { rows } = await client.query<{ done: string }>(
              'SELECT count(*) AS done FROM outbox_events WHERE event_id = ANY ($1) AND fanned_out_at IS NOT NULL',
              [claimed.map((d) => d.eventId)],
            );
            expect(Number(rows[0].done)).toBe(25); // recorded, and each event done
          },
        );
        // A few passes at worst, by the plan of the moment (the subscriber's rows through the index of its
        // subscription, the outbox's index): 3,052-6,077 rows for a success, 3,102-9,127 for a retry here. Never
        // one per record: 25 x 3,000, or more.
        expect(read).toBeLessThan(5 * BACKLOG);
      });
    },
  );

  it('reads stored plants and event ids by key when storing a batch, however many there are', async () => {
    // One connection: the statement is named, so its plan is the one this connection cached while the tables
    // were small, as a worker's connections do from their first batches.
    const client = await pool.connect();
    try {
      for (let i = 0; i < 8; i++) await store(client, 2);
      await store(pool, BACKLOG);
      const read = await rowsRead(client, ['plants', 'processed_events'], () => store(client, 2));
      expect(read).toBeLessThan(50);
    } finally {
      client.release();
    }
  });
});
