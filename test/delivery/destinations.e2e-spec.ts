import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  Message as SqsMessage,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import * as amqp from 'amqplib';
import Redis from 'ioredis';
import type { KafkaMessage } from 'kafkajs';
import mqtt from 'mqtt';
import { connect as natsConnect, NatsConnection } from 'nats';
import { Webhook } from 'standardwebhooks';
import { adminClient } from '../../tools/harness/admin';
import { localBrokers, LocalBrokers } from '../../tools/harness/brokers';
import { ELASTICMQ_REGION, LocalElasticMq, startElasticMq } from '../../tools/harness/elasticmq';
import { Receiver } from '../../tools/harness/receiver';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// Issue 37: a subscription's URL scheme selects its destination. Each kind against its real broker (RabbitMQ,
// NATS JetStream, Mosquitto, Redis, ElasticMQ for SQS, and our own test Kafka under another topic): the New Plant
// arrives signed,
// with its webhook-id as the message id and the webhook headers; credentials are never shown; a broker that
// refuses is an attempt with an error, retried until it takes the message; one that is down holds up no one.
const run = randomBytes(4).toString('hex');
type Headers = Record<string, string>;

describe('destinations beyond HTTP', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  let brokers: LocalBrokers;
  let elasticMq: LocalElasticMq;
  let sqs: SQSClient;
  let admin: ReturnType<typeof adminClient>;
  const nextId = e2e.plantIds();
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    [brokers, elasticMq] = await Promise.all([localBrokers(), startElasticMq()]);
    // ElasticMQ checks no signature: any key and secret are taken (AWS's refusals are unit-tested on their words).
    sqs = new SQSClient({
      region: ELASTICMQ_REGION,
      endpoint: elasticMq.endpoint,
      credentials: { accessKeyId: 'reader', secretAccessKey: 'reader' },
    });
    stack = await startOwnStack('destinations', {
      DELIVERY_POLL_MS: '200',
      DELIVERY_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s',
    });
    gw = stack.gateway;
    admin = adminClient(gw.url);
  }, 180_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await stack?.close();
    sqs?.destroy();
    await Promise.all([brokers?.stop(), elasticMq?.stop()]);
  });

  /** A subscription to `url`, and a plant posted after it; its secret to verify with. */
  async function subscribeAndPost(url: string, destination?: object) {
    const created = await admin.call('POST', '/subscriptions', { url, ...(destination ? { destination } : {}) });
    expect(created.status).toBe(201);
    const plantId = nextId();
    expect((await e2e.postPlant(gw.url, { id: plantId, name: 'Fern', tag: 'fern' })).status).toBe(200);
    return { id: created.body.id as string, secret: created.body.secret as string, plantId, created: created.body };
  }

  /** The delivery of `plantId` to the subscription, once it has succeeded, and its attempts. */
  async function succeeded(subscriptionId: string, plantId: number) {
    const [d] = await waitFor(
      `the delivery to ${subscriptionId} recorded`,
      async () => {
        const found = await admin.deliveriesOf(subscriptionId, `&plantId=${plantId}`);
        return found.length > 0 && found[0].status === 'succeeded' ? found : null;
      },
      30_000,
    );
    return (await admin.call('GET', `/deliveries/${d.id}`)).body;
  }

  /** Each test reads its own plants: the suite's earlier tests' subscriptions stay, and get later plants too. */
  const isPlant = (body: string, plantId: number) => (JSON.parse(body) as { id: number }).id === plantId;

  function expectSigned(secret: string, body: string, headers: Headers, plantId: number) {
    expect(new Webhook(secret).verify(body, headers)).toEqual({ id: plantId, name: 'Fern', tag: 'fern' });
  }

  it('publishes into Kafka, keyed by the plant, acks=all, with the webhook headers', async () => {
    const topic = `plantstore-dest-${run}`;
    const kafkaAdmin = e2e.testKafka().admin();
    await kafkaAdmin.connect();
    await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    await kafkaAdmin.disconnect();
    const got: KafkaMessage[] = [];
    const reader = await e2e.startReader(topic, (m) => got.push(m));
    closers.push(() => reader.disconnect());
    const { id, secret, plantId } = await subscribeAndPost(`kafka://${process.env.KAFKA_BROKERS}/${topic}`);
    const m = await waitFor('the Kafka record', () => got.find((x) => x.key?.toString() === String(plantId)), 30_000);
    const headers = Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]));
    expectSigned(secret, m.value!.toString(), headers, plantId);
    const delivery = await succeeded(id, plantId);
    expect(headers['webhook-id']).toBe(delivery.request.headers['webhook-id']);
    expect(delivery.attemptLog[0]).toMatchObject({ status: null, error: null });
    expect(delivery.attemptLog[0].responseBody).toMatch(
      new RegExp(`^kafka acked: topic ${topic} partition \\d offset \\d+`),
    );
  });

  it('refuses our own plant.created topic, an unknown scheme, a token for a broker, settings of another kind', async () => {
    const own = await admin.call('POST', '/subscriptions', {
      url: `kafka://${process.env.KAFKA_BROKERS}/${stack.env.KAFKA_TOPIC_PREFIX}plant.created`,
    });
    expect(own.status).toBe(422);
    expect(own.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(own.body.errors[0]).toMatchObject({ field: 'url', message: expect.stringMatching(/a loop/) });
    const unknown = await admin.call('POST', '/subscriptions', { url: 'sftp://files.example/plants' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toMatchObject({
      field: 'url',
      message: expect.stringMatching(/"sftp", which is not one of http/),
    });
    const token = await admin.call('POST', '/subscriptions', { url: `${brokers.redis}/s-${run}`, token: 'abc' });
    expect(token.status).toBe(422);
    expect(token.body.errors[0].field).toBe('token');
    const sasl = await admin.call('POST', '/subscriptions', {
      url: `${brokers.redis}/s-${run}`,
      destination: { sasl: { mechanism: 'plain' } },
    });
    expect(sasl.status).toBe(422);
    expect(sasl.body.errors[0].field).toBe('destination.sasl');
    const http = await admin.call('POST', '/subscriptions', {
      url: 'https://example.com/hook',
      destination: { sasl: { mechanism: 'plain' } },
    });
    expect(http.status).toBe(422);
    expect(http.body.errors[0].field).toBe('destination.sasl');
  });

  it('publishes into RabbitMQ with publisher confirms; its credentials are sealed, never shown', async () => {
    const queue = `plantstore-dest-${run}`;
    const conn = await amqp.connect(brokers.amqp);
    closers.push(() => conn.close());
    const ch = await conn.createChannel();
    await ch.assertQueue(queue, { durable: true });
    closers.push(() => ch.deleteQueue(queue));
    const [user, password] = new URL(brokers.amqp).username
      ? [new URL(brokers.amqp).username, new URL(brokers.amqp).password]
      : ['guest', 'guest'];
    const where = new URL(brokers.amqp);
    const url = `amqp://${user}:${password}@${where.host}/?routingKey=${queue}`;
    const { id, secret, plantId, created } = await subscribeAndPost(url);
    expect(created.url).toBe(`amqp://${where.host}/?routingKey=${queue}`);
    expect(created.destination).toEqual({ kind: 'amqp', hasCredentials: true, settings: {} });
    const msg = await waitFor(
      'the AMQP message',
      async () => {
        for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true }))
          if (isPlant(m.content.toString(), plantId)) return m;
        return null;
      },
      30_000,
    );
    expect(msg.properties.deliveryMode).toBe(2); // persistent
    const headers = { ...(msg.properties.headers as Headers) };
    expect(headers['webhook-id']).toBe(msg.properties.messageId);
    expectSigned(secret, msg.content.toString(), headers, plantId);
    const delivery = await succeeded(id, plantId);
    expect(delivery.attemptLog[0].responseBody).toMatch(/^amqp/);
    const shown = JSON.stringify([
      (await admin.call('GET', `/subscriptions/${id}`)).body,
      await admin.call('GET', '/audit'),
    ]);
    expect(shown).not.toContain(`${user}:${password}@`);
  });

  it('retries a message RabbitMQ could not route until a queue is bound for it', async () => {
    const queue = `plantstore-late-${run}`;
    const where = new URL(brokers.amqp);
    const { id, plantId } = await subscribeAndPost(`amqp://guest:guest@${where.host}/?routingKey=${queue}`);
    const failed = await waitFor(
      'a refused attempt',
      async () => {
        const [d] = await admin.deliveriesOf(id, `&plantId=${plantId}`);
        if (!d) return null;
        const detail = (await admin.call('GET', `/deliveries/${d.id}`)).body;
        return detail.attemptLog.length > 0 ? detail : null;
      },
      30_000,
    );
    expect(failed.attemptLog[0].error).toMatch(/no queue is bound|NO_ROUTE/);
    const conn = await amqp.connect(brokers.amqp);
    closers.push(() => conn.close());
    const ch = await conn.createChannel();
    await ch.assertQueue(queue, { durable: false, autoDelete: false });
    closers.push(() => ch.deleteQueue(queue));
    const delivery = await succeeded(id, plantId);
    expect(delivery.attemptLog.length).toBeGreaterThan(1);
    let late = await ch.get(queue, { noAck: true });
    while (late && !isPlant(late.content.toString(), plantId)) late = await ch.get(queue, { noAck: true });
    expect(late).toBeTruthy();
  });

  it('publishes into a NATS JetStream stream with Nats-Msg-Id, and a test send too', async () => {
    const subject = `plantstore-e2e-${run}.new`;
    const stream = `PLANTSTORE_E2E_${run}`;
    const nc: NatsConnection = await natsConnect({ servers: brokers.nats.replace('nats://', '') });
    closers.push(() => nc.close());
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`plantstore-e2e-${run}.>`] });
    closers.push(() => jsm.streams.delete(stream));
    const { id, secret, plantId } = await subscribeAndPost(`${brokers.nats}/${subject}`);
    await succeeded(id, plantId);
    const last = (await jsm.streams.info(stream)).state.last_seq;
    const all = await Promise.all(
      Array.from({ length: last }, (_, i) => jsm.streams.getMessage(stream, { seq: i + 1 })),
    );
    const m = all.find((x) => isPlant(x.string(), plantId))!;
    const headers: Headers = {};
    for (const [k, v] of m.header) headers[k.toLowerCase()] = v[0];
    expect(headers['nats-msg-id']).toBe(headers['webhook-id']);
    expectSigned(secret, m.string(), headers, plantId);
    const test = await admin.call('POST', `/subscriptions/${id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ succeeded: true, response: { status: null, error: null } });
    expect(test.body.response.body).toMatch(/^nats jetstream acked: stream /);
    expect((await jsm.streams.info(stream)).state.last_seq).toBeGreaterThan(last); // the test's own message
  });

  it('publishes into MQTT at QoS 1 with the headers as user properties', async () => {
    const topic = `plantstore/e2e/${run}`;
    const client = await mqtt.connectAsync(brokers.mqtt, { protocolVersion: 5, clean: true, reconnectPeriod: 0 });
    closers.push(() => client.endAsync());
    const got: { body: string; headers: Headers }[] = [];
    client.on('message', (_t, payload, packet) =>
      got.push({ body: payload.toString(), headers: (packet.properties?.userProperties ?? {}) as Headers }),
    );
    await client.subscribeAsync(topic, { qos: 1 });
    const { id, secret, plantId } = await subscribeAndPost(`${brokers.mqtt}/${topic}`);
    const m = await waitFor('the MQTT message', () => got.find((x) => isPlant(x.body, plantId)), 30_000);
    expectSigned(secret, m.body, m.headers, plantId);
    const delivery = await succeeded(id, plantId);
    expect(delivery.attemptLog[0].responseBody).toMatch(/^mqtt puback/);
  });

  it('appends to a Redis stream, and a Redis that is down holds up no other subscriber', async () => {
    const key = `plantstore-e2e-${run}`;
    const redis = new Redis(brokers.redis);
    closers.push(async () => (await redis.del(key), redis.quit()));
    const down = await admin.call('POST', '/subscriptions', { url: `redis://127.0.0.1:1/${key}` });
    expect(down.status).toBe(201);
    const receiver = new Receiver();
    await receiver.start();
    closers.push(() => receiver.stop());
    const http = await admin.call('POST', '/subscriptions', { url: `${receiver.url}/hook` });
    const { id, secret, plantId } = await subscribeAndPost(`${brokers.redis}/${key}`);
    await waitFor('the HTTP delivery beside a broker that is down', () => receiver.on('/hook', plantId)[0], 15_000);
    await succeeded(http.body.id, plantId);
    await succeeded(id, plantId);
    const entries = (await redis.xrange(key, '-', '+')).map(([entryId, fields]) => {
      const entry: Headers = { entryId };
      for (let i = 0; i < fields.length; i += 2) entry[fields[i]] = fields[i + 1];
      return entry;
    });
    const { entryId, ...entry } = entries.find((e) => isPlant(e.body, plantId))!;
    expect(entryId).toMatch(/^\d+-\d+$/);
    expectSigned(secret, entry.body, entry, plantId);
    const [downDelivery] = await admin.deliveriesOf(down.body.id, `&plantId=${plantId}`);
    const detail = (await admin.call('GET', `/deliveries/${downDelivery.id}`)).body;
    expect(detail.status).toBe('pending');
    expect(detail.attemptLog[0].error).toMatch(/^redis: .*127\.0\.0\.1:1/);
  });

  /** A queue of this run on ElasticMQ, deleted after the suite. */
  async function sqsQueue(name: string, fifo = false) {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: fifo ? { FifoQueue: 'true' } : {} }),
    );
    closers.push(() => sqs.send(new DeleteQueueCommand({ QueueUrl })));
    return QueueUrl!;
  }

  /** Receives (and deletes) what the queue has now, appending it to `into`: a consumer's way, in its order. */
  async function receiveInto(queueUrl: string, into: SqsMessage[]) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId', 'SequenceNumber'],
      }),
    );
    if (Messages.length === 0) return into;
    into.push(...Messages);
    const Entries = Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! }));
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries }));
    return into;
  }

  /** A message's attributes as the headers they carry: the three of their own and those of webhook-headers. */
  function sqsHeaders(m: SqsMessage): Headers {
    const a = m.MessageAttributes ?? {};
    return {
      ...(JSON.parse(a['webhook-headers']?.StringValue ?? '{}') as Headers),
      'webhook-id': a['webhook-id']?.StringValue ?? '',
      'webhook-timestamp': a['webhook-timestamp']?.StringValue ?? '',
      'webhook-signature': a['webhook-signature']?.StringValue ?? '',
    };
  }

  it('sends into an SQS queue (ElasticMQ): signed, its headers as attributes, its key sealed, never shown', async () => {
    const queue = `plantstore-e2e-${run}`;
    const queueUrl = await sqsQueue(queue);
    const noRegion = await admin.call('POST', '/subscriptions', {
      url: `sqs+http://k:s@127.0.0.1:${elasticMq.port}/000000000000/${queue}`,
    });
    expect(noRegion.status).toBe(422);
    expect(noRegion.body.errors[0]).toMatchObject({ field: 'url', message: expect.stringMatching(/needs \?region=/) });
    const noKey = await admin.call('POST', '/subscriptions', { url: elasticMq.url(queue).replace(/\/\/[^@]*@/, '//') });
    expect(noKey.status).toBe(422);
    expect(noKey.body.errors[0].message).toMatch(/needs the access key id and secret access key/);
    const { id, secret, plantId, created } = await subscribeAndPost(elasticMq.url(queue));
    expect(created.url).toBe(`sqs+http://127.0.0.1:${elasticMq.port}/000000000000/${queue}?region=elasticmq`);
    expect(created.destination).toEqual({ kind: 'sqs', hasCredentials: true, settings: {} });
    const got: SqsMessage[] = [];
    const m = await waitFor(
      'the SQS message',
      async () => (await receiveInto(queueUrl, got)).find((x) => isPlant(x.Body!, plantId)),
      30_000,
    );
    const headers = sqsHeaders(m);
    expectSigned(secret, m.Body!, headers, plantId);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['plant-store-hops']).toBe('1');
    expect(m.Attributes?.MessageGroupId).toBeUndefined(); // a standard queue: no group
    const delivery = await succeeded(id, plantId);
    expect(headers['webhook-id']).toBe(delivery.request.headers['webhook-id']);
    expect(delivery.attemptLog[0]).toMatchObject({ status: null, error: null });
    expect(delivery.attemptLog[0].responseBody).toBe(`sqs accepted: queue ${queue} message id ${m.MessageId}`);
    const shown = JSON.stringify([
      (await admin.call('GET', `/subscriptions/${id}`)).body,
      await admin.call('GET', '/audit'),
      delivery,
    ]);
    expect(shown).not.toContain('test-secret');
    const test = await admin.call('POST', `/subscriptions/${id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ succeeded: true, response: { status: null, error: null } });
    expect(test.body.response.body).toMatch(new RegExp(`^sqs accepted: queue ${queue} message id \\S+$`));
  });

  it('keeps each plant in order in an SQS FIFO queue: grouped by plant, de-duplicated by webhook-id', async () => {
    const queue = `plantstore-e2e-${run}.fifo`;
    const queueUrl = await sqsQueue(queue, true);
    const sub = await admin.call('POST', '/subscriptions', { url: elasticMq.url(queue) });
    expect(sub.status).toBe(201);
    const ids = [nextId(), nextId()];
    for (let v = 1; v <= 3; v++) {
      // Each version stored before the next is posted: each is an event (and a delivery) of its own.
      for (const plantId of ids) {
        const res = await e2e.postPlant(gw.url, { id: plantId, name: `v${v}` });
        expect(res.status).toBe(200);
        const { eventId } = await res.json();
        await waitFor(`version ${v} of ${plantId} stored`, async () => {
          const p = await fetch(`${gw.url}/plants/${plantId}`, {
            headers: { authorization: `Bearer ${e2e.WEBHOOK_TOKEN}` },
          });
          return p.ok && (await p.json()).lastEventId === eventId;
        });
      }
    }
    const got: SqsMessage[] = [];
    const ours = () => got.filter((m) => ids.includes((JSON.parse(m.Body!) as { id: number }).id));
    await waitFor(
      'every version in the FIFO queue',
      async () => {
        await receiveInto(queueUrl, got);
        return ours().length >= ids.length * 3;
      },
      30_000,
    );
    for (const plantId of ids) {
      const own = ours().filter((m) => isPlant(m.Body!, plantId));
      expect(own.map((m) => (JSON.parse(m.Body!) as { name: string }).name)).toEqual(['v1', 'v2', 'v3']);
      expect(own.map((m) => m.Attributes?.MessageGroupId)).toEqual(Array(3).fill(String(plantId)));
      expect(own.map((m) => m.Attributes?.MessageDeduplicationId)).toEqual(
        own.map((m) => m.MessageAttributes?.['webhook-id']?.StringValue),
      );
      const [d] = await admin.recordedDeliveriesOf(sub.body.id, 1, `&plantId=${plantId}&status=succeeded`);
      const detail = (await admin.call('GET', `/deliveries/${d.id}`)).body;
      // SQS answers a FIFO queue's entry of a SendMessageBatch with its sequence number; ElasticMQ does not.
      expect(detail.attemptLog[0].responseBody).toMatch(
        new RegExp(`^sqs accepted: queue ${queue.replace('.', '\\.')} message id \\S+( sequence \\d+)?$`),
      );
    }
  });
});
