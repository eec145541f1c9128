// A baseline of bench:gateway: the naive webhook-to-Kafka endpoint, bare Fastify and kafkajs, one acks=all
// record per request and the 200 after its ack, the gateway's header and body checks, nothing else. Run in its
// own process (forked by gateway.ts) on a topic of its own, like plant.created; reports its port to the parent.
import Fastify from 'fastify';
import { Kafka } from 'kafkajs';
import { kafkaClientConfigFromEnv } from '@app/kafka';
import { AddressInfo } from 'node:net';
import { passesChecks } from './webhook-checks';

const TOPIC = 'bench.naive';

async function main() {
  const kafka = new Kafka(kafkaClientConfigFromEnv(process.env, 'bench-naive')); // TLS and SASL as the gateway's
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: Number(process.env.PLANT_CREATED_PARTITIONS ?? 6) }],
  });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const fastify = Fastify({ logger: false });
  fastify.post('/plant/webhook', async (req, reply) => {
    if (!passesChecks(req, reply)) return reply;
    const b = req.body as { id: number };
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ key: String(b.id), value: JSON.stringify(b) }] });
    return { eventId: 'x' };
  });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  process.send!((fastify.server.address() as AddressInfo).port);
}

void main();
