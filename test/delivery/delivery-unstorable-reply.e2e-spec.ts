import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// Issue 25, item 2: one subscriber's reply must not jam deliveries for everyone. A reply whose body holds a NUL
// once decoded (here UTF-16LE "OK", bytes 4F 00 4B 00, read as the UTF-8 excerpt "O\0K\0") was refused by
// PostgreSQL (22021) and failed the whole batched record statement: every delivery of the batch, to every
// subscriber, was left unrecorded and sent again after its lease, forever. In a database of its own, so that no
// other suite's worker (or a worker of an older build) sends these deliveries; subscriptions filtered to this
// suite's plants, so that what else the topic holds is not sent to them.
describe('a reply the database cannot store as sent jams nobody', () => {
  const PLANTS = 20;
  let db: e2e.ScratchDatabase;
  let gw: e2e.RunningGateway;
  let worker: e2e.RunningWorker;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    db = await e2e.scratchDatabase('unstorable_reply');
    await receiver.start();
    const env = e2e.baseEnv({ DATABASE_URL: db.url, DELIVERY_TIMEOUT_MS: '3000', DELIVERY_POLL_MS: '200' });
    await e2e.prepareTestInfrastructure(); // the topic, to start at its end
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    worker = await e2e.startWorker(env); // first: its setup migrates the new database
    gw = await e2e.startGateway(env);
  });

  afterAll(async () => {
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await db?.drop();
  });

  it('records every delivery of both subscribers as succeeded, each sent once, the excerpt made storable', async () => {
    const admin = adminClient(gw.url);
    const ids = Array.from({ length: PLANTS }, () => nextId());
    const filter = { plantIds: { min: ids[0], max: ids[PLANTS - 1] } };
    receiver.behave('/utf16', () => ({
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-16le' },
      body: Buffer.from([0x4f, 0x00, 0x4b, 0x00]),
    }));
    const odd = await admin.subscribe({ url: `${receiver.url}/utf16`, filter });
    const plain = await admin.subscribe({ url: `${receiver.url}/plain`, filter });

    // Posted together, so that both subscribers' outcomes share record statements.
    const posted = await Promise.all(ids.map((id) => e2e.postPlant(gw.url, { id, name: `Fern ${id}` })));
    expect(posted.map((r) => r.status)).toEqual(Array(PLANTS).fill(200));

    const recorded = await waitFor(
      'every delivery recorded as succeeded',
      async () => {
        const { rows } = await db.pool.query(
          "SELECT count(*)::int AS n FROM all_deliveries WHERE status = 'succeeded' AND plant_id = ANY($1::bigint[])",
          [ids],
        );
        return rows[0].n === 2 * PLANTS ? rows[0].n : null;
      },
      30000,
      200,
    );
    expect(recorded).toBe(2 * PLANTS);

    // Every plant once to each subscriber: nothing sent again, for neither of them.
    for (const path of ['/utf16', '/plain']) {
      const got = receiver.on(path, ...ids).map((r) => JSON.parse(r.body).id);
      expect(got.sort()).toEqual([...ids].sort());
    }
    // Every event done, so nothing is left to be sent again once a lease runs out.
    const { rows: open } = await db.pool.query(
      'SELECT count(*)::int AS n FROM outbox_events WHERE fanned_out_at IS NULL AND plant_id = ANY($1::bigint[])',
      [ids],
    );
    expect(open[0].n).toBe(0);

    // What the odd subscriber answered is kept, its NUL shown as its escape: an operator still sees the reply.
    const [first] = await admin.deliveriesOf(odd.id, `&plantId=${ids[0]}`);
    const detail = (await admin.call('GET', `/deliveries/${first.id}`)).body;
    expect(detail.attemptLog.map((a: { responseBody: string }) => a.responseBody)).toEqual(['O\\u0000K\\u0000']);
    expect(plain.id).toBeDefined();
  }, 60000);
});
