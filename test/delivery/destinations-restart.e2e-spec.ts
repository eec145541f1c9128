import { randomBytes } from 'node:crypto';
import { adminClient } from '../../tools/harness/admin';
import { BrokerKind, localBrokers, LocalBrokers } from '../../tools/harness/brokers';
import { brokerReader, kafkaReader, Reader } from '../../tools/harness/broker-readers';
import { postVersionStored } from '../../tools/harness/plant-versions';
import { startOwnBroker } from '../../tools/harness/own-broker';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// Issue 37, item 7: each broker kind's real server stopped and started again mid-run (destinations-faults cuts a
// proxy instead): every version of every plant arrives, each plant's in order, the failed attempts recorded. Own
// brokers (never the machine's shared ones), each keeping its data across the restart: Redis's append-only file
// and JetStream's file store are killed (SIGKILL: they write what they acknowledge before answering); Mosquitto
// saves its sessions when it stops and RabbitMQ its durable queue, both stopped with SIGTERM. What arrived is read
// back with each broker's own client: Redis's stream, JetStream's stream and RabbitMQ's durable queue after the
// restart; MQTT through a reader with a persistent session, whose QoS 1 messages the broker keeps while it is away.
// Kafka: a broker of the suite's own (its JVM, not the test stack's) killed with SIGKILL and started again on its
// data; what arrived is read by a consumer opened before the stop and another after it, from the topic's start.
const run = randomBytes(4).toString('hex');
const PLANTS = 4;
/** Versions 1–2 before the stop, 3–4 while the broker is down, 5–6 after it is back. */
const VERSIONS = 6;
const KINDS: { kind: BrokerKind; signal: NodeJS.Signals }[] = [
  { kind: 'redis', signal: 'SIGKILL' },
  { kind: 'nats', signal: 'SIGKILL' },
  { kind: 'mqtt', signal: 'SIGTERM' },
  { kind: 'amqp', signal: 'SIGTERM' },
];

describe('destinations when their broker restarts', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  let brokers: LocalBrokers;
  let admin: ReturnType<typeof adminClient>;
  const nextId = e2e.plantIds();

  beforeAll(async () => {
    // Own brokers on free ports: this suite stops them, so never the machine's shared ones.
    brokers = await localBrokers(
      KINDS.map((k) => k.kind),
      { standardPorts: false },
    );
    stack = await startOwnStack('destrestart', {
      DELIVERY_POLL_MS: '200',
      // Enough attempts to outlast a restart and the pool's reconnect backoff after it (RabbitMQ's takes longest);
      // a short breaker probe, so that the backlog goes on soon after the broker is back.
      DELIVERY_RETRY_SCHEDULE: ['0s', ...Array<string>(59).fill('1s')].join(','),
      DELIVERY_CIRCUIT_PROBE_MIN: '1s',
      DELIVERY_CIRCUIT_PROBE_MAX: '2s',
      DELIVERY_TIMEOUT_MS: '3000',
    });
    gw = stack.gateway;
    admin = adminClient(gw.url);
  }, 240_000);

  afterAll(async () => {
    await stack?.close();
    await brokers?.stop();
  });

  const postVersion = (ids: number[], v: number) => postVersionStored(gw.url, ids, v);

  /** The attempt logs of this test's deliveries to the subscription. */
  async function attemptLogs(subscriptionId: string, ids: number[], status = '') {
    const deliveries = (
      await Promise.all(ids.map((id) => admin.deliveriesOf(subscriptionId, `&plantId=${id}${status}`)))
    ).flat();
    const logs = await Promise.all(deliveries.map((d) => admin.call('GET', `/deliveries/${d.id}`)));
    return logs.map((r) => r.body.attemptLog as { error: string | null }[]);
  }

  /**
   * Versions 1–2 sent, the broker stopped (by `stopped`) while 3–4 are posted and fail, then 5–6 once it is back:
   * every version of every plant arrives, each plant's in order, and the failed attempts are on record.
   */
  async function survivesRestart(
    kind: BrokerKind | 'kafka',
    r: Reader,
    stopped: (during: () => Promise<void>) => Promise<void>,
  ) {
    const sub = await admin.call('POST', '/subscriptions', { url: r.url });
    expect(sub.status).toBe(201);
    const ids = Array.from({ length: PLANTS }, () => nextId());
    // The suite's earlier tests' subscriptions stay: only this test's plants count.
    const own = async () => (await r.read()).filter((m) => ids.includes((JSON.parse(m.body) as { id: number }).id));
    await postVersion(ids, 1);
    await waitFor('version 1 at the broker', async () => (await own()).length >= PLANTS, 30_000);
    await postVersion(ids, 2); // its deliveries are under way when the broker stops
    await r.beforeStop?.();
    await stopped(async () => {
      for (let v = 3; v <= 4; v++) await postVersion(ids, v);
      await waitFor(
        'a failed attempt recorded',
        async () => (await attemptLogs(sub.body.id, ids, '&status=pending')).flat().some(isKind(kind)),
        30_000,
      );
    });
    for (let v = 5; v <= VERSIONS; v++) await postVersion(ids, v);
    const got = await waitFor(
      'every version of every plant',
      async () => {
        const all = await own();
        return new Set(all.map((m) => m.id)).size >= PLANTS * VERSIONS ? all : null;
      },
      90_000,
      250,
    );
    const names = Array.from({ length: VERSIONS }, (_, i) => `v${i + 1}`);
    for (const id of ids) {
      const versions = got
        .map((m) => JSON.parse(m.body) as { id: number; name: string })
        .filter((p) => p.id === id)
        .map((p) => p.name);
      // At least once: a message may come twice (taken by the broker, its answer lost in the stop), never
      // out of order.
      expect([...new Set(versions)]).toEqual(names);
      expect(versions).toEqual([...versions].sort());
    }
    // Each delivery recorded as succeeded (the record follows the broker's answer, a moment later).
    await waitFor('every delivery recorded as succeeded', async () => {
      const ours = await Promise.all(ids.map((id) => admin.deliveriesOf(sub.body.id, `&plantId=${id}`)));
      return ours.flat().filter((d) => d.status === 'succeeded').length === PLANTS * VERSIONS;
    });
    // The stop shows in the record: attempts that failed with the broker's error before the one that took it.
    expect((await attemptLogs(sub.body.id, ids)).filter((log) => log.some(isKind(kind))).length).toBeGreaterThan(0);
    await admin.call('DELETE', `/subscriptions/${sub.body.id}`);
  }

  it.each(KINDS)(
    '$kind: its broker stopped ($signal) and started again mid-run loses nothing and keeps each plant in order',
    async ({ kind, signal }) => {
      const r = await brokerReader(kind, brokers[kind], `plantstore-restart-${run}`);
      try {
        await survivesRestart(kind, r, (during) => brokers.stopped(kind, during, signal));
      } finally {
        await r.close().catch(() => undefined);
      }
    },
    150_000,
  );

  it('kafka: its broker killed (SIGKILL) and started again mid-run loses nothing and keeps each plant in order', async () => {
    const kafka = await startOwnBroker('destrestart');
    const { node } = kafka;
    try {
      const r = await kafkaReader(kafka.brokers, `plantstore-restart-${run}`);
      try {
        await survivesRestart('kafka', r, async (during) => {
          node.signal('SIGKILL', { group: true });
          await node.whenExited();
          try {
            await during();
          } finally {
            await node.start();
          }
        });
      } finally {
        await r.close().catch(() => undefined);
      }
    } finally {
      await kafka.stop();
    }
  }, 180_000);
});

const isKind = (kind: BrokerKind | 'kafka') => (a: { error: string | null }) =>
  a.error?.startsWith(`${kind}:`) ?? false;
