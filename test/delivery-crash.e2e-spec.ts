import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { adminClient } from './support/admin';
import { Receiver } from './support/receiver';
import { baseEnv, plantIds, postPlant, RunningGateway, RunningWorker, startGateway, startWorker, testPool } from './support/stack';
import { waitFor } from './support/wait';

const BUILT_WORKER = path.resolve(__dirname, '../dist/apps/worker/apps/worker/src/main.js');

// A worker killed with SIGKILL while a subscriber is answering loses no delivery: its lease runs out, another
// worker sends it again, with the same webhook-id so the receiver can tell it is a duplicate.
describe('delivery survives a worker killed mid-delivery', () => {
  let gw: RunningGateway;
  let child: ChildProcess | null = null;
  let rescuer: RunningWorker | null = null;
  const receiver = new Receiver();
  const nextId = plantIds();
  const env = baseEnv({ DELIVERY_TIMEOUT_MS: '2000', DELIVERY_POLL_MS: '200' });

  beforeAll(async () => {
    await receiver.start();
    gw = await startGateway(env);
  });

  afterAll(async () => {
    child?.kill('SIGKILL');
    await rescuer?.close();
    await gw?.close();
    await receiver.stop();
  });

  it('re-sends the delivery the killed worker had in flight, with the same webhook-id', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.behave('/crash', (_r, nth) => (nth === 1 ? { status: 200, hold: held } : { status: 200 }));
    const admin = adminClient(gw.url);
    const sub = await admin.subscribe({ url: `${receiver.url}/crash` });

    child = spawn(process.execPath, [BUILT_WORKER], { env: { ...env, WORKER_METRICS_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    child.stdout!.on('data', (d) => output.push(String(d)));
    child.stderr!.on('data', (d) => output.push(String(d)));
    child.once('exit', (code, signal) => output.push(`[worker exited: code ${code}, signal ${signal}]`));
    const id = nextId();
    const res = await postPlant(gw.url, { id, name: 'Survivor' });
    const { eventId } = (await res.json()) as { eventId: string };

    await waitFor('the first attempt to reach the receiver', () => receiver.on('/crash').length === 1, 45000).catch((err) => {
      throw new Error(`${err.message}\nworker output:\n${output.join('').slice(-4000)}`);
    });
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    release();

    // Its own group: joining the killed worker's group would wait out the dead member's session timeout.
    rescuer = await startWorker({ ...env, WORKER_GROUP_ID: `${env.WORKER_GROUP_ID}-rescuer` });
    await waitFor('the delivery to be sent again and succeed', async () => {
      const [d] = await admin.deliveriesOf(sub.id);
      return d?.status === 'succeeded';
    }, 30000, 250);
    const ids = receiver.on('/crash').map((r) => r.headers['webhook-id']);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ids)).toEqual(new Set([eventId]));

    const pool = testPool();
    try {
      const { rows } = await pool.query('SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = $1', [sub.id]);
      expect(rows[0].n).toBe(1);
    } finally {
      await pool.end();
    }
    await admin.call('DELETE', `/subscriptions/${sub.id}`);
  }, 90000);
});
