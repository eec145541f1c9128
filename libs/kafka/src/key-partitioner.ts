import type { ICustomPartitioner, PartitionerArgs } from 'kafkajs';

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/**
 * Kafka's murmur2 (the Java client's `Utils.murmur2`, which kafkajs's DefaultPartitioner reimplements), in 32-bit
 * integer arithmetic. kafkajs computes it with a Long object per step: ~60 objects per key, twice per webhook
 * (the gateway's lane, then kafkajs's own placement), a few per cent of the gateway's allocations and CPU under
 * load (bench:gateway, docs/benchmarks.md). Same input, same output: key-partitioner.spec.ts checks it against
 * kafkajs's own over thousands of keys.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & 3; // the last 1-3 bytes, as Java's switch falls through its cases
  if (tail === 3) h ^= data[whole + 2] << 16;
  if (tail >= 2) h ^= data[whole + 1] << 8;
  if (tail >= 1) h = Math.imul(h ^ data[whole], M);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition a keyed record goes to among `partitions`, as every Kafka client's default partitioner puts it. */
export function partitionOfKey(key: Buffer | string, partitions: number): number {
  // As kafkajs's: a Buffer as it is, anything else (a key typed as a string may arrive as a number) as its text.
  const bytes = Buffer.isBuffer(key) ? key : Buffer.from(String(key));
  return (murmur2(bytes) & 0x7fffffff) % partitions;
}

/**
 * kafkajs's DefaultPartitioner, decision for decision (a record's own partition; else its key's hash; else round
 * robin over the partitions with a leader, starting at a random one), without its allocations per record.
 */
export const KeyPartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }: PartitionerArgs): number => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    const partitions = partitionMetadata.length;
    if (message.key !== null && message.key !== undefined) return partitionOfKey(message.key, partitions);
    const next = (counters.get(topic) ?? Math.floor(Math.random() * 2 ** 31)) + 1;
    counters.set(topic, next);
    const available = partitionMetadata.filter((p) => p.leader >= 0);
    if (available.length > 0) return available[(next & 0x7fffffff) % available.length].partitionId;
    return (next & 0x7fffffff) % partitions;
  };
};
