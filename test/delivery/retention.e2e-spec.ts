import { randomUUID } from 'node:crypto';
import { loadConfig, workerEnvSchema } from '@app/config';
import { RetentionPruner } from '../../apps/worker/src/retention/retention-pruner';
import * as e2e from '../../tools/harness/stack';
import { metricSum } from '../../tools/harness/metrics';
import { waitFor } from '../../tools/harness/wait';

// Retention, through a real worker on a database of its own: past their windows, remembered event ids and
// finished mutable deliveries go, in batches, and the delivery log's days, whole partitions; recent rows and pending
// deliveries, however old, stay.

const HOUR = 3_600_000;

describe('retention', () => {
  let db: e2e.ScratchDatabase;
  let worker: e2e.RunningWorker;
  let subscription: string;

  beforeAll(async () => {
    db = await e2e.scratchDatabase('retention');
    worker = await e2e.startWorker(
      e2e.baseEnv({
        DATABASE_URL: db.url,
        PROCESSED_EVENTS_RETENTION: '1h',
        DELIVERY_RETENTION: '2h',
        DELIVERY_RETRY_SCHEDULE: '0s,1s',
        RETENTION_BATCH_SIZE: '7', // several batches per table
        RETENTION_SWEEP_MS: '60000', // the test's rows are written first; the first sweep comes after
      }),
    );
    const sub = await db.pool.query(
      `INSERT INTO subscriptions (url, secret, enabled) VALUES ('http://127.0.0.1:9/', 'whsec_x', false) RETURNING id`,
    );
    subscription = sub.rows[0].id;
  });

  afterAll(async () => {
    await worker?.close();
    await db?.drop();
  });

  const ago = (ms: number) => new Date(Date.now() - ms);

  async function processedEvent(age: number) {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO processed_events (event_id, plant_id, event_time, kafka_topic, kafka_partition, kafka_offset, processed_at)
       VALUES ($1, 1, $2, 'plant.created', 0, 0, $2)`,
      [id, ago(age)],
    );
    return id;
  }

  async function delivery(status: string, created: number, updated: number) {
    const r = await db.pool.query(
      `INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, status, created_at, updated_at)
       VALUES ($1, $2, 1, '{}', now(), $3, $4, $5) RETURNING id`,
      [subscription, randomUUID(), status, ago(created), ago(updated)],
    );
    return r.rows[0].id as string;
  }

  async function outboxEvent(age: number, fannedOut: boolean) {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO outbox_events (event_id, plant_id, body, event_time, created_at, fanned_out_at)
       VALUES ($1, 1, '{}', $2, $2, CASE WHEN $3 THEN $2::timestamptz END)`,
      [id, ago(age), fannedOut],
    );
    return id;
  }

  it('prunes what is past its window, keeps what is recent or still to do, and counts it', async () => {
    // Outbox events go a day and an hour after their deliveries' window (a delivery sent at once reads its body
    // there, and the log keeps a day until all of it is past the window).
    const oldOutbox = await Promise.all(Array.from({ length: 3 }, () => outboxEvent(28 * HOUR, true)));
    const keptOutbox = [await outboxEvent(26 * HOUR, true), await outboxEvent(30 * HOUR, false)];
    // The log: a day three days back goes whole, today's stays.
    const day = (ms: number) => new Date(Date.now() - ms).toISOString().slice(0, 10);
    await db.pool.query('SELECT delivery_log_add_partitions($1::date, $1::date)', [day(72 * HOUR)]);
    const appended = (age: number) =>
      db.pool.query(
        `INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, attempt_log, created_at)
         VALUES (gen_random_uuid(), $1, $2, 1, now(), '[]', $3) RETURNING id`,
        [subscription, randomUUID(), ago(age)],
      );
    await appended(72 * HOUR);
    const keptAppended = (await appended(0)).rows[0].id as string;
    const oldEvents = await Promise.all(Array.from({ length: 20 }, () => processedEvent(2 * HOUR)));
    const recentEvents = await Promise.all(Array.from({ length: 5 }, () => processedEvent(HOUR / 2)));
    const oldDone = [
      ...(await Promise.all(Array.from({ length: 10 }, () => delivery('succeeded', 3 * HOUR, 3 * HOUR)))),
      ...(await Promise.all(Array.from({ length: 10 }, () => delivery('failed', 3 * HOUR, 3 * HOUR)))),
    ];
    const goneSub = await db.pool.query(
      `INSERT INTO subscriptions (url, secret, enabled, deleted_at) VALUES ('http://127.0.0.1:9/', 'whsec_x', false, $1)
       RETURNING id`,
      [ago(3 * HOUR)],
    );
    const kept = [
      await delivery('pending', 30 * HOUR, 30 * HOUR), // old but still to do
      await delivery('failed', 3 * HOUR, HOUR), // old, but retried recently: its attempts stay visible
      await delivery('succeeded', HOUR, HOUR), // recent
    ];

    // The sweep the timer would run, now rather than in a minute.
    await worker.app.get(RetentionPruner).sweep();

    // Only this test's rows: the worker also consumes the shared topic into this database as the suite runs.
    const events = await db.pool.query(`SELECT event_id FROM processed_events WHERE event_id = ANY($1)`, [
      [...oldEvents, ...recentEvents],
    ]);
    expect(events.rows.map((r) => r.event_id).sort()).toEqual([...recentEvents].sort());
    const deliveries = await db.pool.query(`SELECT id FROM all_deliveries`);
    expect(deliveries.rows.map((r) => r.id).sort()).toEqual([...kept, keptAppended].sort());
    const partitions = await db.pool.query(
      `SELECT to_date(substring(relname FROM '[0-9]{8}$'), 'YYYYMMDD') - (now() AT TIME ZONE 'UTC')::date AS day
       FROM pg_inherits JOIN pg_class ON oid = inhrelid WHERE inhparent = 'delivery_log'::regclass ORDER BY 1`,
    );
    // Gone: the day three days back, and yesterday (past a 2 h window once it is 02:00); made: a week ahead.
    expect(partitions.rows.map((r) => r.day)).toEqual(
      new Date().getUTCHours() >= 2 ? [0, 1, 2, 3, 4, 5, 6, 7] : [-1, 0, 1, 2, 3, 4, 5, 6, 7],
    );
    // A subscription deleted long ago goes once no delivery is left; the one still holding history stays.
    const subs = await db.pool.query('SELECT id FROM subscriptions WHERE id = ANY($1)', [
      [goneSub.rows[0].id, subscription],
    ]);
    expect(subs.rows.map((r) => r.id)).toEqual([subscription]);
    expect(oldDone.length).toBe(20);
    const outbox = await db.pool.query('SELECT event_id FROM outbox_events WHERE event_id = ANY($1)', [
      [...oldOutbox, ...keptOutbox],
    ]);
    expect(outbox.rows.map((r) => r.event_id).sort()).toEqual([...keptOutbox].sort());

    await waitFor(
      'the pruned counters',
      async () =>
        (await metricSum(worker.url, 'plant_store_pruned_rows_total', 'table="processed_events"')) === 20 &&
        (await metricSum(worker.url, 'plant_store_pruned_rows_total', 'table="deliveries"')) === 20 &&
        (await metricSum(worker.url, 'plant_store_pruned_partitions_total', 'table="delivery_log"')) >= 1,
    );
  });

  it('refuses a delivery retention shorter than the retry schedule, naming both', () => {
    expect(() =>
      loadConfig(workerEnvSchema, {
        SECRETS_KEY: e2e.TEST_SECRETS_KEY,
        DELIVERY_RETRY_SCHEDULE: '0s,5s,5m,30m,2h,5h,10h,10h',
        DELIVERY_RETENTION: '1d',
      }),
    ).toThrow(/DELIVERY_RETENTION: must be at least the whole DELIVERY_RETRY_SCHEDULE \(28h\)/);
    expect(() =>
      loadConfig(workerEnvSchema, { SECRETS_KEY: e2e.TEST_SECRETS_KEY, PROCESSED_EVENTS_RETENTION: 'a week' }),
    ).toThrow(/PROCESSED_EVENTS_RETENTION: a duration like 7d/);
  });
});
