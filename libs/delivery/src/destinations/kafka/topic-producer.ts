import { Message, Partitioners, Producer, RecordMetadata } from 'kafkajs';
import { isConnectionLoss } from './kafka-errors';
import { DEFAULT_LIMITS, PublishBatcher } from '../publish-batcher';

/**
 * kafkajs's default partitioner (murmur2 of the key, as Java's), remembering the partition it chose for each
 * message: one answer of a produce carries one base offset per partition, and a message's own offset follows
 * from its place among the messages of its partition.
 */
export function recordingPartitioner(chosen: WeakMap<Message, number>) {
  return () => {
    const partition = Partitioners.DefaultPartitioner();
    return (args: Parameters<ReturnType<typeof Partitioners.DefaultPartitioner>>[0]) => {
      const n = partition(args);
      chosen.set(args.message, n);
      return n;
    };
  };
}

/**
 * Messages to the topics of one connection, batched per topic (../publish-batcher.ts): one topic's refusal (it does
 * not exist, the user may not write to it) never fails another's messages. A batch that fails for any reason but
 * a lost connection is tried again one message at a time, so a message its topic refuses (too large, a policy)
 * fails alone and its neighbours go. Resolves with the message's partition and offset.
 */
export class TopicProducer {
  private readonly topics = new Map<string, PublishBatcher<Message, RecordMetadata>>();

  constructor(
    private readonly producer: Producer,
    private readonly chosen: WeakMap<Message, number>,
    private readonly timeoutMs: number,
  ) {}

  async publish(topic: string, message: Message): Promise<RecordMetadata> {
    let batcher = this.topics.get(topic);
    if (!batcher) {
      batcher = new PublishBatcher((messages) => this.together(topic, messages), {
        ...DEFAULT_LIMITS,
        splitOnFailure: (err) => !isConnectionLoss(err),
      });
      this.topics.set(topic, batcher);
    }
    try {
      return await batcher.publish(message, sizeOf(message));
    } finally {
      // Bounded by what is in use: a topic with nothing waiting nor on the wire is forgotten.
      if (batcher.idle) this.topics.delete(topic);
    }
  }

  /** One produce request with acks=all; each message's partition and offset from the partitions' base offsets. */
  private async together(topic: string, messages: Message[]): Promise<RecordMetadata[]> {
    const answers = await this.producer.send({ topic, acks: -1, timeout: this.timeoutMs, messages });
    const next = new Map(answers.map((a) => [a.partition, BigInt(a.baseOffset ?? '0')]));
    return messages.map((m) => {
      const partition = this.chosen.get(m) ?? answers[0]?.partition ?? 0;
      const offset = next.get(partition) ?? BigInt(0);
      next.set(partition, offset + BigInt(1));
      return { topicName: topic, partition, errorCode: 0, baseOffset: offset.toString() };
    });
  }
}

/** A message's bytes as a request carries them, near enough: key, value and headers. */
function sizeOf(m: Message): number {
  let bytes = Buffer.byteLength(String(m.key ?? '')) + Buffer.byteLength(String(m.value ?? ''));
  for (const [k, v] of Object.entries(m.headers ?? {})) bytes += k.length + Buffer.byteLength(String(v ?? ''));
  return bytes;
}
