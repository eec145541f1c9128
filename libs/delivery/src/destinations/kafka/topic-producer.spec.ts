import { Message, Producer, ProducerRecord, RecordMetadata } from 'kafkajs';
import { recordingPartitioner, TopicProducer } from './topic-producer';

// The batching of a Kafka destination's messages, against a fake producer that answers as kafkajs does: one
// RecordMetadata per partition with its base offset, partitions chosen by the producer's partitioner.

/** A producer whose sends are recorded and answered (or refused) at once; 3 partitions; offsets per partition. */
function fakeProducer(refuse: (r: ProducerRecord) => Error | null = () => null) {
  const chosen = new WeakMap<Message, number>();
  const partitioner = recordingPartitioner(chosen)();
  const partitionMetadata = [0, 1, 2].map((partitionId) => ({
    partitionId,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  const ends = new Map<string, number>();
  const sends: ProducerRecord[] = [];
  const producer = {
    async send(r: ProducerRecord): Promise<RecordMetadata[]> {
      sends.push(r);
      const refusal = refuse(r);
      if (refusal) throw refusal;
      const per = new Map<number, number>();
      for (const message of r.messages) {
        const p = partitioner({ topic: r.topic, partitionMetadata, message });
        per.set(p, (per.get(p) ?? 0) + 1);
      }
      return [...per].map(([partition, n]) => {
        const key = `${r.topic}/${partition}`;
        const base = ends.get(key) ?? 0;
        ends.set(key, base + n);
        return { topicName: r.topic, partition, errorCode: 0, baseOffset: String(base) };
      });
    },
  } as unknown as Producer;
  return { producer, chosen, sends };
}

const msg = (key: string, value = `{"id":${key}}`): Message => ({
  key,
  value,
  headers: { 'webhook-id': `msg_${key}` },
});

describe(TopicProducer.name, () => {
  it("gives each message of a batch its own partition and offset, one plant's messages in one partition", async () => {
    const { producer, chosen, sends } = fakeProducer();
    const topics = new TopicProducer(producer, chosen, 1000);
    const keys = ['1', '2', '3', '1', '2', '3', '1'];
    const answers = await Promise.all(keys.map((k) => topics.publish('plants', msg(k))));
    expect(sends).toHaveLength(1);
    const byKey = new Map<string, RecordMetadata[]>();
    keys.forEach((k, i) => byKey.set(k, [...(byKey.get(k) ?? []), answers[i]]));
    for (const got of byKey.values()) {
      expect(new Set(got.map((a) => a.partition)).size).toBe(1);
      const offsets = got.map((a) => Number(a.baseOffset));
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    }
    const perPartition = new Map<number, string[]>();
    for (const a of answers) perPartition.set(a.partition, [...(perPartition.get(a.partition) ?? []), a.baseOffset!]);
    for (const offsets of perPartition.values()) expect(offsets).toEqual(offsets.map((_, i) => String(i)));
  });

  it("keeps one topic's refusal from another's messages, and a refused message from its neighbours", async () => {
    const { producer, chosen, sends } = fakeProducer((r) =>
      r.topic === 'missing'
        ? new Error('This server does not host this topic-partition')
        : r.messages.some((m) => String(m.value).length > 50)
          ? new Error('The request included a message larger than the max message size the server will accept')
          : null,
    );
    const topics = new TopicProducer(producer, chosen, 1000);
    const outcomes = await Promise.allSettled([
      topics.publish('plants', msg('1')),
      topics.publish('plants', msg('2', 'x'.repeat(100))),
      topics.publish('plants', msg('3')),
      topics.publish('missing', msg('4')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    // The plants batch failed whole, then went one message at a time.
    expect(sends.filter((s) => s.topic === 'plants').map((s) => s.messages.length)).toEqual([3, 1, 1, 1]);
  });
});
