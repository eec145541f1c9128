import { randomUUID } from 'node:crypto';
import { loadConfig, workerEnvSchema } from '@app/config';
import { RetentionPruner } from '../apps/worker/src/retention/retention-pruner';
import * as e2e from '../tools/support/stack';
import { metricSum } from '../tools/support/metrics';
import { waitFor } from '../tools/support/wait';

// Retention, through a real worker on a database of its own: past their windows, remembered event ids and
// finished deliveries go, in batches; recent rows and pending deliveries, however old, stay.

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
    // Outbox events go an hour after their deliveries' window (a delivery sent at once reads its body there).
    const oldOutbox = await Promise.all(Array.from({ length: 3 }, () => outboxEvent(4 * HOUR, true)));
    const keptOutbox = [await outboxEvent(90 * 60_000, true), await outboxEvent(30 * HOUR, false)];
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
    const deliveries = await db.pool.query(`SELECT id FROM deliveries`);
    expect(deliveries.rows.map((r) => r.id).sort()).toEqual([...kept].sort());
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
        (await metricSum(worker.url, 'plant_store_pruned_rows_total', 'table="deliveries"')) === 20,
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
