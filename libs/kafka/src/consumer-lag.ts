import type { Admin } from 'kafkajs';

export interface PartitionLag {
  partition: number;
  /** Records on the partition not yet committed by the group. */
  lag: number;
}

/**
 * A consumer group's lag on a topic, per partition, from the broker's view: high watermark minus the group's
 * committed offset. A partition the group never committed on is read from its start (what is retained).
 */
export async function consumerLag(admin: Admin, groupId: string, topic: string): Promise<PartitionLag[]> {
  // Both settle before this does: with Promise.all, the first failure returned while the other request went on
  // retrying in the background, past the caller's deadline and its disconnect.
  const [highWatermarks, offsets] = await Promise.allSettled([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  if (highWatermarks.status === 'rejected') throw highWatermarks.reason;
  if (offsets.status === 'rejected') throw offsets.reason;
  const high = highWatermarks.value;
  const [committed] = offsets.value;
  const done = new Map(committed.partitions.map((p) => [p.partition, BigInt(p.offset)]));
  return high.map((p) => {
    const c = done.get(p.partition) ?? -1n;
    const from = c < 0n ? BigInt(p.low) : c;
    return { partition: p.partition, lag: Number(BigInt(p.high) - from) };
  });
}

/** Nest's Kafka server appends "-server" to the group id it is given. */
export const workerConsumerGroup = (workerGroupId: string) => `${workerGroupId}-server`;
