// Readers of what a destination published, each with the broker's own client, in the broker's order: what the
// destination suites compare with what was posted. Each reader has a name of its own (`name`: a topic, queue,
// subject, stream key), so suites and tests never read each other's messages.
import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import Redis from 'ioredis';
import { Consumer, Kafka, logLevel } from 'kafkajs';
import mqtt from 'mqtt';
import { BrokerKind } from './brokers';
import { jetStreamReader, ReadMessage } from './jetstream-reader';

type Message = ReadMessage;
/** What arrived at a broker, in its order; read() may fail while the broker is down. */
export interface Reader {
  url: string;
  read(): Promise<Message[]>;
  close(): Promise<unknown>;
  /** Lets go of the broker before it stops (a reader that would not come back on its own). */
  beforeStop?(): Promise<void>;
}

/**
 * A Kafka topic of the suite's own broker, read by a consumer group from the topic's start. The consumer is closed
 * before the broker stops and a new group reads everything again afterwards: a kafkajs consumer whose only broker
 * was killed is not what this test is about.
 */
export async function kafkaReader(bootstrap: string, name: string, partitions = 2): Promise<Reader> {
  const topic = `${name}-kafka`;
  const kafka = new Kafka({ clientId: `${name}-reader`, brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  await admin.disconnect();
  let consumer: Promise<Consumer> | null = null;
  let got: Message[] = [];
  const open = async () => {
    got = [];
    const c = kafka.consumer({ groupId: `${topic}-${randomBytes(3).toString('hex')}` });
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      eachMessage: async ({ message }) =>
        void got.push({ id: String(message.headers?.['webhook-id']), body: message.value!.toString() }),
    });
    return c;
  };
  const read = async () => {
    await (consumer ??= open().catch((err) => ((consumer = null), Promise.reject(err))));
    return got;
  };
  const beforeStop = async () => {
    const c = consumer;
    consumer = null;
    await (await c)?.disconnect();
  };
  return { url: `kafka://${bootstrap}/${topic}`, read, close: beforeStop, beforeStop };
}

/** A reader on the broker at `base` (its URL as localBrokers() gives it) of the kind's own name under `prefix`. */
export async function brokerReader(kind: BrokerKind, base: string, prefix: string): Promise<Reader> {
  const name = `${prefix}-${kind}`;
  const where = new URL(base).host;
  if (kind === 'amqp') {
    // The messages wait in the durable queue; each read takes what is there, on a connection opened again after
    // the restart.
    let open: Promise<{ conn: amqp.ChannelModel; ch: amqp.Channel }> | null = null;
    const connect = async () => {
      const conn = await amqp.connect(base);
      conn.on('error', () => undefined);
      conn.on('close', () => (open = null));
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      return { conn, ch };
    };
    const got: Message[] = [];
    await (await (open = connect())).ch.assertQueue(name, { durable: true });
    const read = async () => {
      const { ch } = await (open ??= connect().catch((err) => ((open = null), Promise.reject(err))));
      for (let m = await ch.get(name, { noAck: true }); m; m = await ch.get(name, { noAck: true }))
        got.push({ id: m.properties.messageId, body: m.content.toString() });
      return got;
    };
    const close = async () => {
      const { conn, ch } = await open!;
      await ch.deleteQueue(name);
      await conn.close();
    };
    return { url: `amqp://guest:guest@${where}/?routingKey=${name}`, read, close };
  }
  if (kind === 'nats') {
    const js = await jetStreamReader(name, {
      servers: where,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    return { url: `nats://${where}/${js.subject}`, read: js.read, close: js.close };
  }
  if (kind === 'mqtt') {
    // Clean start off and a session that outlives the connection: Mosquitto keeps the reader's subscription and
    // queues its QoS 1 messages while the reader is away (saved to its persistence file when it stops).
    const client = await mqtt.connectAsync(base, {
      protocolVersion: 5,
      clientId: name,
      clean: false,
      properties: { sessionExpiryInterval: 600 },
      reconnectPeriod: 250,
    });
    client.on('error', () => undefined);
    const got: Message[] = [];
    client.on('message', (_t, payload, packet) =>
      got.push({ id: String(packet.properties?.userProperties?.['webhook-id']), body: payload.toString() }),
    );
    await client.subscribeAsync(`${name}/new`, { qos: 1 });
    return { url: `mqtt://${where}/${name}/new`, read: async () => got, close: () => client.endAsync(true) };
  }
  const redis = new Redis(base, { lazyConnect: false });
  redis.on('error', () => undefined);
  const read = async () =>
    (await redis.xrange(name, '-', '+')).map(([, f]) => ({ id: f[f.indexOf('webhook-id') + 1], body: f.at(-1)! }));
  return { url: `redis://${where}/${name}`, read, close: async () => (await redis.del(name), redis.quit()) };
}
