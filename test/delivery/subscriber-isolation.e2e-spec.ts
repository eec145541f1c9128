// @alone: a retry's time checked to the second beside 40,000 held rows: another suite's load would
// be in the figure.

import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

const BACKLOG = 10_000;
const RETRY_AFTER_MS = 2000;

// Issue 35, isolation: a subscriber whose rows may not go (disabled by a 410, deleted while a replay re-queued its
// rows, paused by a Retry-After, its circuit open) holds 10,000 due rows older than anyone's; another subscriber's
// retry still goes out on its schedule (± 1 s), and nothing of the held subscribers is sent. Each state is added
// beside the earlier ones, so the last retry is checked with 40,000 held rows ahead of it. The backlogs are written
// straight into the table (what the replay, the 410 or the pause leave behind), the rest is the real worker.
describe("isolation: one subscriber's held rows never delay another's retry", () => {
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  const sharedDatabaseUrl = process.env.DATABASE_URL;
  const victimIds = { min: nextId(), max: 0 };
  let victim: { id: string };
  const admin = () => adminClient(gw.url);

  beforeAll(async () => {
    db = await e2e.scratchDatabase('isolation');
    process.env.DATABASE_URL = db.url;
    await receiver.start();
    const env = e2e.baseEnv({
      DATABASE_URL: db.url,
      DELIVERY_RETRY_SCHEDULE: `0s,${RETRY_AFTER_MS}ms`,
      DELIVERY_POLL_MS: '200',
    });
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    worker = await e2e.startWorker(env);
    gw = await e2e.startGateway(env);
    // The victim fails each message's first attempt: its second is the retry whose time is checked.
    const seen = new Set<string>();
    receiver.behave('/victim', (r) => {
      const first = !seen.has(String(r.headers['webhook-id']));
      seen.add(String(r.headers['webhook-id']));
      return { status: first ? 500 : 204 };
    });
    victimIds.max = victimIds.min + 99;
    victim = await admin().subscribe({ url: `${receiver.url}/victim`, filter: { plantIds: victimIds } });
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await worker?.close();
    await receiver.stop();
    await db?.drop();
    process.env.DATABASE_URL = sharedDatabaseUrl;
  });

  /** A subscriber of no live plant, `held`, then given BACKLOG due rows older than anything the victim has. */
  const heldSubscriber = async (held: string) => {
    const noisy = await admin().subscribe({
      url: `${receiver.url}/held`,
      filter: { plantIds: { min: victimIds.max + 1, max: victimIds.max + 1 } },
    });
    await db.pool.query(`UPDATE subscriptions SET ${held} WHERE id = $1`, [noisy.id]);
    // Held first, as rows pile up behind a subscriber already held: every worker knows by its next heartbeat
    // (a second) or reload, and claims none of them; three, for a loaded machine.
    await new Promise((r) => setTimeout(r, 3000));
    await db.pool.query(
      `INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, next_attempt_at, created_at)
       SELECT $1::uuid, 'held-' || $1::text || '-' || g, g, '{"id":' || g || ',"name":"held"}', now() - interval '1 hour',
              now() - interval '1 hour' + g * interval '1 millisecond', now() - interval '1 hour'
       FROM generate_series(1, ${BACKLOG}) g`,
      [noisy.id],
    );
    return noisy;
  };

  /** Posts a plant for the victim; the gap between its failed first attempt and its retry. */
  const retryGap = async () => {
    await new Promise((r) => setTimeout(r, 500)); // the rows are in every claim's view
    const id = nextId();
    expect((await e2e.postPlant(gw.url, { id, name: 'Victim' })).status).toBe(200);
    const [first, retry] = await waitFor('the retry', () => {
      const got = receiver.on('/victim', id);
      return got.length >= 2 ? got : null;
    });
    return retry.at - first.at;
  };

  const states: [string, string][] = [
    ['disabled by a 410', `enabled = false, disabled_reason = 'the receiver answered 410 Gone'`],
    ['deleted while a replay re-queued its rows', `enabled = false, disabled_reason = 'deleted', deleted_at = now()`],
    ['paused by a Retry-After', `paused_until = now() + interval '1 hour'`],
    [
      'with its circuit open',
      `circuit_state = 'open', circuit_probe_at = now() + interval '1 hour', consecutive_failures = 5`,
    ],
  ];

  it.each(states)('retries on schedule beside a subscriber %s with 10,000 due rows', async (_what, held) => {
    await heldSubscriber(held);
    const gap = await retryGap();
    expect(gap).toBeGreaterThanOrEqual(RETRY_AFTER_MS - 1000);
    expect(gap).toBeLessThanOrEqual(RETRY_AFTER_MS + 1000);
    expect(receiver.on('/held')).toHaveLength(0);
  });

  it('left every held row waiting: none was claimed, none lost', async () => {
    const { rows } = await db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM deliveries WHERE event_id LIKE 'held-%' AND status = 'pending' AND attempts = 0`,
    );
    expect(Number(rows[0].n)).toBe(BACKLOG * states.length);
    // The receiver has had each retry; the worker records its outcome a moment later (its writes are coalesced).
    const succeeded = await waitFor("the victim's retries recorded as succeeded", async () => {
      const done = await admin().deliveriesOf(victim.id, '&status=succeeded');
      return done.length >= states.length ? done : null;
    });
    expect(succeeded).toHaveLength(states.length);
  });
});
