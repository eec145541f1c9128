import { randomBytes } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { KeyPartitioner, murmur2, partitionOfKey } from './key-partitioner';

// kafkajs's own murmur2 (Long arithmetic), the reference this one must equal.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: Buffer | string) => number;

const metadata = (count: number, leaderless: number[] = []) =>
  Array.from({ length: count }, (_, partitionId) => ({
    partitionId,
    leader: leaderless.includes(partitionId) ? -1 : 0,
    partitionErrorCode: 0,
    replicas: [],
    isr: [],
  }));

describe('murmur2 and the key partitioner', () => {
  it('hashes every key as kafkajs (and the Java client) does: lengths 0 to 64, random bytes', () => {
    for (let length = 0; length <= 64; length++)
      for (let n = 0; n < 200; n++) {
        const key = randomBytes(length);
        expect(murmur2(key)).toBe(kafkajsMurmur2(key));
      }
  });

  it("matches the Java client's known values", () => {
    // org.apache.kafka.common.utils.UtilsTest#testMurmur2
    expect(murmur2(Buffer.from('21'))).toBe(-973932308);
    expect(murmur2(Buffer.from('foobar'))).toBe(-790332482);
    expect(murmur2(Buffer.from('a-little-bit-long-string'))).toBe(-985981536);
    expect(murmur2(Buffer.from('a-little-bit-longer-string'))).toBe(-1486304829);
    expect(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'))).toBe(-58897971);
  });

  it('places keyed records where kafkajs DefaultPartitioner does, for string and Buffer keys', () => {
    const ours = KeyPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    for (const count of [1, 3, 12, 50])
      for (let id = 0; id < 2000; id++) {
        for (const key of [String(id), Buffer.from(`plant-${id}`)]) {
          const args = { topic: 't', partitionMetadata: metadata(count), message: { key, value: 'v' } };
          expect(ours(args)).toBe(theirs(args));
          expect(partitionOfKey(key, count)).toBe(theirs(args));
        }
      }
  });

  it("keeps a record's own partition, and spreads keyless records over partitions with a leader", () => {
    const place = KeyPartitioner();
    expect(place({ topic: 't', partitionMetadata: metadata(3), message: { key: 'k', value: 'v', partition: 2 } })).toBe(
      2,
    );
    const seen = new Set<number>();
    for (let i = 0; i < 30; i++)
      seen.add(place({ topic: 't', partitionMetadata: metadata(4, [1]), message: { key: null, value: 'v' } }));
    expect([...seen].sort()).toEqual([0, 2, 3]);
  });
});
