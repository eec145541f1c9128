// Runs beside the other suites: the PostgreSQL it freezes is its own, on a port freePort() chose for it.

import { loadConfig, workerEnvSchema } from '@app/config';
import { PLANT_CREATED_TOPIC } from '@app/contracts';
import { createLogger } from '@app/observability';
import { prepareInfrastructure } from '../../apps/worker/src/setup/prepare';
import { adminClient } from '../../tools/harness/admin';
import { OwnPostgres } from '../../tools/harness/own-postgres';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// PostgreSQL frozen with SIGSTOP (a hung host: connections stay open, nothing answers), on a server of this
// suite's own. Every query is bounded (1 s on the server, 1.5 s on our side here), so the admin API answers 503
// problem+json instead of hanging, the worker retries, and both recover after SIGCONT with no restart.
describe('a frozen database: bounded, 503 where a request cannot wait, retried where it can', () => {
  const QUERY_TIMEOUT_MS = 1500;
  const pg = new OwnPostgres({});
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  let env: NodeJS.ProcessEnv;
  let gw: e2e.RunningGateway | undefined;
  let worker: e2e.RunningWorker | undefined;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    await Promise.all([pg.start(), receiver.start()]);
    env = e2e.baseEnv({
      DATABASE_URL: pg.url(),
      DATABASE_STATEMENT_TIMEOUT_MS: '1000',
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      DATABASE_CONNECT_TIMEOUT_MS: '1500',
      DELIVERY_TIMEOUT_MS: '5000', // leases of 10 s: outcomes are retried for as long
      DELIVERY_POLL_MS: '200',
      DELIVERY_RETRY_SCHEDULE: '0s,300ms,1s,2s,5s,10s',
    });
    await prepareInfrastructure(loadConfig(workerEnvSchema, env), createLogger('freeze-e2e', 'warn'));
    // The worker's group starts at the topic's end: this database is new, earlier suites' events are not its business.
    const kafkaAdmin = e2e.testKafka().admin();
    await kafkaAdmin.connect();
    const ends = await kafkaAdmin.fetchTopicOffsets(PLANT_CREATED_TOPIC);
    await kafkaAdmin.setOffsets({
      groupId: `${env.WORKER_GROUP_ID}-server`,
      topic: PLANT_CREATED_TOPIC,
      partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })),
    });
    await kafkaAdmin.disconnect();
    gw = await e2e.startGateway(env);
    admin = adminClient(gw.url);
  }, 60000);

  afterAll(async () => {
    pg.thaw();
    await worker?.close();
    await gw?.close();
    await receiver.stop();
    await pg.stop();
  });

  it('answers admin requests 503 problem+json within the bound while frozen, and 200 again after SIGCONT', async () => {
    expect((await admin.call('GET', '/subscriptions')).status).toBe(200);
    pg.freeze();
    let answers: Awaited<ReturnType<typeof admin.call>>[];
    const started = Date.now();
    try {
      answers = await Promise.all([
        admin.call('GET', '/subscriptions'), // on a connection the pool already holds
        admin.call('GET', '/deliveries'),
        admin.call('GET', '/overview'),
        admin.call('POST', '/subscriptions', { url: `${receiver.url}/never` }), // a write: not retried for the caller
        ...Array.from({ length: 10 }, () => admin.call('GET', '/audit')), // more than the pool: new connections, or a wait
      ]);
    } finally {
      pg.thaw();
    }
    const elapsed = Date.now() - started;
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(a.headers.get('retry-after')).toBe('5');
      expect(a.body).toMatchObject({ type: 'https://plant.store/problems/unavailable', status: 503 });
      expect(a.body.detail).toMatch(/database .*retry shortly/);
    }
    // One bound (query, connect or the wait for a connection), not their sum nor an endless wait.
    expect(elapsed).toBeLessThan(3 * QUERY_TIMEOUT_MS + 3000);
    // Back by itself: the dropped connections are replaced, no restart.
    await waitFor(
      'the admin API to answer again',
      async () => (await admin.call('GET', '/subscriptions')).status === 200,
    );
  });

  it('delivery: the worker waits out the frozen database and every event ends delivered and recorded once', async () => {
    const first = nextId();
    const ids = [first, ...Array.from({ length: 19 }, () => nextId())];
    const sub = await admin.subscribe({
      url: `${receiver.url}/frozen`,
      filter: { plantIds: { min: first, max: ids[ids.length - 1] } },
    });
    // The first answers wait for the freeze, so their outcomes meet a database that does not answer.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.behave('/frozen', () => ({ status: 204, hold: held }));
    worker = await e2e.startWorker(env);
    const post = async (id: number) =>
      expect((await e2e.postPlant(gw!.url, { id, name: `Frozen ${id}` })).status).toBe(200);
    for (const id of ids.slice(0, 10)) await post(id);
    await waitFor('the first deliveries', () => receiver.on('/frozen').length >= 3, 60000);

    pg.freeze(); // outcomes being recorded, events being stored and fanned out: all of it waits
    release();
    try {
      for (const id of ids.slice(10)) await post(id); // the webhook needs Kafka only
      await new Promise((r) => setTimeout(r, 3 * QUERY_TIMEOUT_MS)); // several bounds: the worker's retries meet it
    } finally {
      pg.thaw();
    }

    const done = async () =>
      (
        await pg.admin(
          `SELECT count(*)::int AS n FROM all_deliveries WHERE subscription_id = '${sub.id}' AND status = 'succeeded'`,
          'plantstore',
        )
      ).rows[0].n === ids.length;
    await waitFor('every delivery recorded as succeeded', done, 60000, 250);
    const rows = await pg.admin(
      `SELECT plant_id, count(*)::int AS n FROM all_deliveries WHERE subscription_id = '${sub.id}' GROUP BY plant_id`,
      'plantstore',
    );
    expect(rows.rows.map((r) => Number(r.plant_id)).sort()).toEqual([...ids].sort());
    expect(rows.rows.every((r) => r.n === 1)).toBe(true); // one delivery per event, none lost, none doubled
    const sent = receiver.on('/frozen');
    expect(new Set(sent.map((r) => JSON.parse(r.body).id))).toEqual(new Set(ids));
    // The outcomes that met the frozen database were retried within their lease, so nothing was sent twice
    // (without that retry the lease ran out and the receiver got those webhooks again).
    expect(sent.map((r) => r.headers['webhook-id']).length).toBe(ids.length);
    expect(new Set(sent.map((r) => r.headers['webhook-id'])).size).toBe(ids.length);
  });
});
