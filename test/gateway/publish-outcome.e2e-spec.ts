// @alone: it pauses the shared broker (SIGSTOP): every other suite's publishes would stall with it.

import { Pool } from 'pg';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

interface Unavailable {
  outcome: 'not_accepted' | 'unknown';
  idempotencyKey: string;
  eventId?: string;
  detail: string;
}

// What a 503 promises (issue #10, item 3). The attack: broker killed or paused under load; 911 requests
// answered 503 were stored anyway, and a sender retrying without a key of its own stored them twice. Here the
// broker is paused under more webhooks than MAX_PUBLISHES_IN_FLIGHT, senders without keys follow the 503's
// advice, and every plant must be stored under exactly one event.
describe('a 503 from the gateway', () => {
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  let pool: Pool;
  const nextId = e2e.plantIds();
  const pid = Number(process.env.LOCAL_KAFKA_PID);

  beforeAll(async () => {
    const env = e2e.baseEnv({ PUBLISH_TIMEOUT_MS: '1500', MAX_PUBLISHES_IN_FLIGHT: '4' });
    gw = await e2e.startGateway(env);
    worker = await e2e.startWorker(env);
    pool = e2e.testPool();
  });

  afterAll(async () => {
    await worker?.close();
    await gw?.close();
    await pool?.end();
  });

  it('says whether the event may have been written, names the key to retry with, and that retry stores it once', async () => {
    if (!pid) return console.warn('LOCAL_KAFKA_PID unset (external broker): skipped');
    const ids = Array.from({ length: 10 }, () => nextId());
    const first: Response[] = [];
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      first.push(...(await Promise.all(ids.map((id) => e2e.postPlant(gw.url, { id, name: `Paused ${id}` })))));
      expect(Date.now() - started).toBeLessThan(4000); // bounded by PUBLISH_TIMEOUT_MS, never held open
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const problems = await Promise.all(
      first.map(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get('retry-after'),
        body: (await r.json()) as Unavailable,
      })),
    );
    expect(problems.map((p) => p.status)).toEqual(ids.map(() => 503));
    // Beyond MAX_PUBLISHES_IN_FLIGHT the gateway sheds at once; those and withdrawn ones were never written.
    const shed = problems.filter((p) => p.retryAfter === '1');
    expect(shed.length).toBeGreaterThanOrEqual(ids.length - 4);
    for (const p of shed)
      expect(p.body).toMatchObject({ outcome: 'not_accepted', idempotencyKey: expect.stringMatching(/^ps_/) });
    for (const p of problems) expect(p.body.detail).toContain(`webhook-id: ${p.body.idempotencyKey}`);
    // At least one was on the wire when the broker stopped: its fate is honestly unknown.
    expect(problems.some((p) => p.body.outcome === 'unknown')).toBe(true);

    // Senders do what the 503 says: retry with the key it names until 200.
    const accepted = await Promise.all(
      ids.map((id, i) =>
        waitFor(
          `plant ${id} accepted on retry`,
          async () => {
            const res = await e2e.postPlant(
              gw.url,
              { id, name: `Paused ${id}` },
              { 'webhook-id': problems[i].body.idempotencyKey },
            );
            return res.status === 200 ? ((await res.json()) as { eventId: string }).eventId : false;
          },
          30000,
          300,
        ),
      ),
    );
    // A retry of an attempt that may have been written gets that attempt's event id: one event, however it ended.
    problems.forEach((p, i) => p.body.eventId && expect(accepted[i]).toBe(p.body.eventId));

    const stored = () =>
      pool.query(
        'SELECT plant_id, count(*)::int AS n FROM processed_events WHERE plant_id = ANY($1::bigint[]) GROUP BY plant_id',
        [ids],
      );
    await waitFor(
      'every plant stored',
      async () =>
        (await pool.query('SELECT count(*)::int AS n FROM plants WHERE id = ANY($1::bigint[])', [ids])).rows[0].n ===
        ids.length,
      30000,
      250,
    );
    // Give a late write of an "unknown" attempt time to land; it must be the same event, not a second one.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await stored()).rows.map((r) => r.n)).toEqual(ids.map(() => 1));
  }, 90000);
});
