import { LoopHeaders } from '@app/contracts';
import { adminClient } from '../../tools/harness/admin';
import { metricSum } from '../../tools/harness/metrics';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// The attack (issue #10, item 1): a Plant Store subscribed to its own /plant/webhook turned one plant into
// ~180 events/s forever, silently. An echo that changes nothing must change and send nothing; a loop through
// something that does change the data must die out after MAX_WEBHOOK_HOPS, and say so in a metric. On a database
// and topics of its own: a store subscribed to itself would post every plant of the shared topic back into it.
describe('subscription loops', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  const MAX_HOPS = 4;

  beforeAll(async () => {
    stack = await startOwnStack('loops', { MAX_WEBHOOK_HOPS: String(MAX_HOPS) });
    ({ gateway: gw, worker } = stack);
    await receiver.start();
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  const count = async (sql: string, args: unknown[]) => (await stack.db.pool.query(sql, args)).rows[0].n as number;
  const metric = (name: string, having = '') => metricSum(worker.url, name, having);
  /**
   * Waits until `read` gives at least `expected`, then the same value twice, 1.5 s apart: the loop has stopped, or
   * never will. Not before `expected`: a round slower than 1.5 s (a busy machine) is not the loop's end.
   */
  const settled = async (read: () => Promise<number>, expected: number) => {
    let last = -1;
    return waitFor(
      'the counts to settle',
      async () => {
        const now = await read();
        const same = now === last;
        last = now;
        return same && now >= expected ? now : false;
      },
      20000,
      1500,
    );
  };

  it('a store subscribed to its own webhook stores the echo once and sends nothing more', async () => {
    const admin = adminClient(gw.url);
    const self = await admin.subscribe({ url: `${gw.url}/plant/webhook`, token: e2e.WEBHOOK_TOKEN });
    try {
      const id = nextId();
      expect((await e2e.postPlant(gw.url, { id, name: 'Echo' })).status).toBe(200);
      await waitFor('the delivery to itself', async () =>
        (await admin.deliveriesOf(self.id, `&plantId=${id}`)).some((d) => d.status === 'succeeded'),
      );
      const events = await settled(
        () => count('SELECT count(*)::int AS n FROM processed_events WHERE plant_id = $1', [id]),
        2,
      );
      expect(events).toBe(2); // the plant, and its echo (unchanged: nothing stored, nothing sent)
      expect(await count('SELECT count(*)::int AS n FROM all_deliveries WHERE plant_id = $1', [id])).toBe(1);
      expect(await metric('plant_store_events_total', 'outcome="unchanged"')).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.call('DELETE', `/subscriptions/${self.id}`);
    }
  });

  it('a loop that changes the plant each round dies out after MAX_WEBHOOK_HOPS, counted', async () => {
    const admin = adminClient(gw.url);
    const id = nextId();
    // A forwarder that appends to the name and posts the plant back, keeping the loop headers as it should.
    receiver.behave('/mutate', (r) => {
      const plant = JSON.parse(r.body);
      if (plant.id === id) {
        void e2e.postPlant(
          gw.url,
          { ...plant, name: `${plant.name}+` },
          {
            [LoopHeaders.hops]: String(r.headers[LoopHeaders.hops]),
            [LoopHeaders.origin]: String(r.headers[LoopHeaders.origin]),
          },
        );
      }
      return { status: 204 };
    });
    const sub = await admin.subscribe({ url: `${receiver.url}/mutate` });
    try {
      const suppressedBefore = await metric('plant_store_loop_events_suppressed_total');
      const res = await e2e.postPlant(gw.url, { id, name: 'Loop' });
      const { eventId } = (await res.json()) as { eventId: string };
      const deliveries = await settled(async () => receiver.on('/mutate', id).length, MAX_HOPS);
      expect(deliveries).toBe(MAX_HOPS);
      const got = receiver.on('/mutate', id);
      expect(got.map((r) => r.headers[LoopHeaders.hops])).toEqual(['1', '2', '3', '4']);
      expect(new Set(got.map((r) => r.headers[LoopHeaders.origin]))).toEqual(new Set([eventId]));
      // The last round was stored (the data is real) but not delivered again.
      expect((await stack.db.pool.query('SELECT name FROM plants WHERE id = $1', [id])).rows[0].name).toBe(
        `Loop${'+'.repeat(MAX_HOPS)}`,
      );
      expect(await metric('plant_store_loop_events_suppressed_total')).toBe(suppressedBefore + 1);
    } finally {
      await admin.call('DELETE', `/subscriptions/${sub.id}`);
    }
  });
});
