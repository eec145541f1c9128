// bench:delivery --kinds: what each broker kind needs for one run, made with a name of its own and removed after
// it (also on Ctrl-C): a topic on the bench's own Kafka with as many partitions and replicas as plant.created, a
// durable RabbitMQ queue, a JetStream stream capturing its subject, a Redis stream key, an SQS queue on ElasticMQ
// (counted by its ApproximateNumberOfMessages: exact on ElasticMQ, nothing reads it). MQTT needs nothing (a QoS 1
// PUBACK comes with or without a subscriber); a QoS 0 subscriber here only sees the run end. `count()` says how many
// messages the broker has taken so far, asked of the broker: nothing asks the worker or PostgreSQL while their CPU
// is metered. `brokerTransport` is the floor's publisher (http-floor.ts): the worker's own broker connection code
// (CONNECTORS: kafkajs, amqplib, nats, mqtt, ioredis, the AWS SDK as the worker drives them) alone in a process.
import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import * as amqp from 'amqplib';
import Redis from 'ioredis';
import { Kafka } from 'kafkajs';
import mqtt from 'mqtt';
import { connect as natsConnect } from 'nats';
import { PLANT_CREATED_TOPIC } from '@app/contracts';
import { BROKER_KINDS, BrokerKind, CONNECTORS, ConnectGuard, parseBrokerUrl } from '@app/delivery';
import { kafkaClientConfigFromEnv } from '@app/kafka';
import { stopSpawned } from '../local-stack/processes';
import { info } from '../local-stack/progress';
import { ELASTICMQ_ACCOUNT, ELASTICMQ_REGION } from '../harness/elasticmq';

export type Kind = 'http' | BrokerKind;

/** Where each broker kind but Kafka is (its URL up to the port; sqs: ElasticMQ's endpoint), and their stop. */
export type BrokerBases = Partial<Record<Exclude<BrokerKind, 'kafka'>, string>> & { stop(): Promise<void> };
export const KINDS: readonly Kind[] = ['http', ...BROKER_KINDS];

export interface Target {
  kind: BrokerKind;
  /** The subscriptions' URL. */
  url: string;
  /** What the broker has taken so far: compare two readings. */
  count(): Promise<number>;
  /** False where count() may miss messages (MQTT's QoS 0 subscriber): a run then also ends when it stalls. */
  exact: boolean;
  /** Removes what was made, once (later calls share the first). */
  teardown(): Promise<void>;
}

/** How one kind makes, counts and removes its destination. */
interface Parts {
  url: string;
  exact?: boolean;
  create(): Promise<unknown>;
  count(): Promise<number>;
  remove(): Promise<unknown>;
  close(): Promise<unknown>;
}

/** The teardowns of targets not yet removed: what an interrupt removes. */
const live = new Set<() => Promise<void>>();
/** Set by an interrupt: the apps being stopped, which a teardown waits for (a late XADD would make a key again). */
let appsStopped: Promise<void> | null = null;

/** A destination of `kind` for one run. `env`: the bench stack's (its Kafka); `brokers`: the other kinds' bases. */
export async function createTarget(kind: BrokerKind, env: Record<string, string>, brokers: BrokerBases | null) {
  const name = `plantstore-bench-${randomBytes(4).toString('hex')}`;
  const parts = kind === 'kafka' ? await kafkaParts(env, name) : await brokerParts(kind, brokers![kind]!, name);
  const created = parts.create();
  let removed: Promise<void> | undefined;
  const teardown = () =>
    (removed ??= (async () => {
      await created.catch(() => undefined); // an interrupt while it is being made: removed once it is there
      await appsStopped;
      await parts.remove().catch((err) => info(`${kind}: could not remove ${name}: ${err.message}`));
      await parts.close().catch(() => undefined);
      live.delete(teardown);
    })());
  live.add(teardown);
  await created.catch(async (err) => {
    await teardown(); // its connection closed, whatever of it was made removed
    throw err;
  });
  return { kind, url: parts.url, count: parts.count, exact: parts.exact ?? true, teardown } satisfies Target;
}

async function kafkaParts(env: Record<string, string>, topic: string): Promise<Parts> {
  const admin = new Kafka(kafkaClientConfigFromEnv({ ...process.env, ...env }, 'bench-destinations')).admin();
  await admin.connect();
  return {
    url: `kafka://${env.KAFKA_BROKERS}/${topic}`,
    async create() {
      const [own] = (await admin.fetchTopicMetadata({ topics: [PLANT_CREATED_TOPIC] })).topics;
      const numPartitions = own.partitions.length;
      const replicationFactor = own.partitions[0].replicas.length;
      await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor }], waitForLeaders: true });
    },
    count: async () => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0),
    remove: () => admin.deleteTopics({ topics: [topic] }),
    close: () => admin.disconnect(),
  };
}

async function brokerParts(kind: Exclude<BrokerKind, 'kafka'>, base: string, name: string): Promise<Parts> {
  if (kind === 'amqp') {
    const connection = await amqp.connect(base);
    const ch = await connection.createChannel();
    return {
      url: `${base}/?routingKey=${name}`,
      create: () => ch.assertQueue(name, { durable: true }),
      count: async () => (await ch.checkQueue(name)).messageCount,
      remove: () => ch.deleteQueue(name),
      close: () => connection.close(),
    };
  }
  if (kind === 'nats') {
    const nc = await natsConnect({ servers: base.replace('nats://', '') });
    const jsm = await nc.jetstreamManager();
    const stream = name.replace(/-/g, '_').toUpperCase();
    const subject = `${name}.new`;
    return {
      url: `${base}/${subject}`,
      create: () => jsm.streams.add({ name: stream, subjects: [subject] }),
      count: async () => (await jsm.streams.info(stream)).state.last_seq, // every message taken, duplicates not
      remove: () => jsm.streams.delete(stream),
      close: () => nc.close(),
    };
  }
  if (kind === 'sqs') {
    // ElasticMQ checks no signature: any key and secret do.
    const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };
    const sqs = new SQSClient({ region: ELASTICMQ_REGION, endpoint: base, credentials, maxAttempts: 1 });
    const QueueUrl = `${base}/${ELASTICMQ_ACCOUNT}/${name}`;
    return {
      url: `sqs+http://bench:bench@${new URL(base).host}/${ELASTICMQ_ACCOUNT}/${name}?region=${ELASTICMQ_REGION}`,
      create: () => sqs.send(new CreateQueueCommand({ QueueName: name })),
      async count() {
        const names = ['ApproximateNumberOfMessages' as const];
        const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: names }));
        return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
      },
      remove: () => sqs.send(new DeleteQueueCommand({ QueueUrl })),
      close: async () => sqs.destroy(),
    };
  }
  if (kind === 'mqtt') {
    const topic = `${name}/new`;
    const client = await mqtt.connectAsync(base, { protocolVersion: 5, reconnectPeriod: 0 });
    let seen = 0;
    client.on('message', () => seen++);
    return {
      url: `${base}/${topic}`,
      exact: false, // the broker may drop QoS 0 messages for a subscriber that falls behind
      create: () => client.subscribeAsync(topic, { qos: 0 }),
      count: async () => seen,
      remove: async () => undefined, // nothing retained, nothing to remove
      close: () => client.endAsync(),
    };
  }
  const redis = new Redis(base, { lazyConnect: true });
  await redis.connect();
  return {
    url: `${base}/${name}`,
    create: async () => undefined, // the worker's first XADD makes the stream
    async count() {
      // entries-added (Redis 7): every XADD, although MAXLEN ~ trims the stream as the worker's XADD asks
      const info = (await redis.call('XINFO', 'STREAM', name).catch(() => null)) as (string | number)[] | null;
      if (!info) return 0; // no stream yet
      const at = (field: string) => Number(info[info.indexOf(field) + 1]);
      return info.includes('entries-added') ? at('entries-added') : at('length');
    },
    remove: () => redis.del(name),
    close: () => redis.quit(),
  };
}

/**
 * Ctrl-C or SIGTERM while broker kinds run: the apps are stopped first (nothing publishes then, and no late XADD
 * makes a Redis key again), then what the kinds made is removed while the bench's Kafka still runs, then the
 * handlers there were (the stack's own: the rest of what the bench started). Call it after startStack.
 */
export function removeTargetsOnInterrupt(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const before = process.listeners(signal);
    process.removeAllListeners(signal);
    let stopping = false;
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      if (live.size === 0) return before.forEach((listener) => listener(signal));
      info(`${signal}: removing the destinations --kinds made`);
      appsStopped = stopSpawned().catch(() => undefined);
      const all = Promise.all([...live].map((teardown) => teardown()));
      const bound = new Promise((resolve) => setTimeout(resolve, 40000).unref());
      void Promise.race([all, bound])
        .catch((err) => info(`${signal}: ${err.message}`))
        .finally(() => before.forEach((listener) => listener(signal)));
    });
  }
}

/** The floor's publisher to `url`: one connection, as the worker's pool holds it, publishing what it is given. */
export async function brokerTransport(url: string) {
  const parsed = parseBrokerUrl(url);
  if (!parsed.ok) throw new Error(`the floor's URL ${parsed.reason}`);
  const target = parsed.value;
  // Private networks allowed (as the bench's worker): a host that is an address is used as it is.
  const guard: ConnectGuard = { resolve: async (host) => host, lookup: dns.lookup, timeoutMs: 15000 };
  const connection = await CONNECTORS[target.kind](target, guard);
  let n = 0;
  return {
    // A key and id of its own each time, as deliveries have: partitions spread, JetStream drops no duplicate.
    post: (_url: string, headers: Record<string, string>, body: string) => {
      n++;
      return connection.publish({ key: String(6e12 + n), messageId: `msg_floor_${n}`, body, headers }, target);
    },
    close: () => connection.close(),
  };
}
