import { ChildProcess } from 'node:child_process';
import { adminClient } from '../../tools/harness/admin';
import { OwnDatabase, ownDatabase } from '../../tools/harness/own-stack';
import { exitOf, spawnBuiltApp } from '../../tools/harness/processes';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// A worker killed with SIGKILL while a subscriber is answering loses no delivery: its lease runs out, another
// worker sends it again, with the same webhook-id so the receiver can tell it is a duplicate. On a database and
// topics of its own: its workers claim this suite's deliveries alone.
describe('delivery survives a worker killed mid-delivery', () => {
  let own: OwnDatabase;
  let env: NodeJS.ProcessEnv;
  let gw: e2e.RunningGateway;
  let child: ChildProcess | null = null;
  let rescuer: e2e.RunningWorker | null = null;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    await receiver.start();
    own = await ownDatabase('crash', { DELIVERY_TIMEOUT_MS: '2000', DELIVERY_POLL_MS: '200' });
    env = own.env;
    await e2e.prepareInfrastructureFor(env); // what the worker's set-up does: the gateway comes first here
    gw = await e2e.startGateway(env);
  });

  afterAll(async () => {
    child?.kill('SIGKILL');
    await rescuer?.close();
    await gw?.close();
    await receiver.stop();
    await own?.db.drop();
  });

  it('re-sends the delivery the killed worker had in flight, with the same webhook-id', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const id = nextId();
    let first = true;
    // Hold the first attempt for our plant until the worker is dead.
    receiver.behave('/crash', (r) => {
      if (JSON.parse(r.body).id !== id || !first) return { status: 200 };
      first = false;
      return { status: 200, hold: held };
    });
    const admin = adminClient(gw.url);
    const sub = await admin.subscribe({ url: `${receiver.url}/crash` });

    const spawned = spawnBuiltApp('worker', { ...env, WORKER_METRICS_PORT: '0' });
    child = spawned.child;
    const { output } = spawned;
    const res = await e2e.postPlant(gw.url, { id, name: 'Survivor' });
    const { eventId } = (await res.json()) as { eventId: string };

    await waitFor('the first attempt to reach the receiver', () => receiver.on('/crash', id).length === 1, 45000).catch(
      (err) => {
        throw new Error(`${err.message}\nworker output:\n${output.join('').slice(-4000)}`);
      },
    );
    child.kill('SIGKILL');
    await exitOf(child);
    release();

    // Its own group: joining the killed worker's group would wait out the dead member's session timeout.
    rescuer = await e2e.startWorker({ ...env, WORKER_GROUP_ID: `${env.WORKER_GROUP_ID}-rescuer` });
    await waitFor(
      'the delivery to be sent again and succeed',
      async () => {
        const [d] = await admin.deliveriesOf(sub.id, `&plantId=${id}`);
        return d?.status === 'succeeded';
      },
      30000,
      250,
    );
    const ids = receiver.on('/crash', id).map((r) => r.headers['webhook-id']);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ids)).toEqual(new Set([eventId]));

    const { rows } = await own.db.pool.query(
      'SELECT count(*)::int AS n FROM all_deliveries WHERE subscription_id = $1 AND plant_id = $2',
      [sub.id, id],
    );
    expect(rows[0].n).toBe(1);
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  }, 90000);
});
