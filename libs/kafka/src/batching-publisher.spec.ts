import { Producer } from 'kafkajs';
import { BatchingPublisher, partitionLanes, PublishTimeoutError } from './batching-publisher';

function fakeProducer() {
  const calls: { topic: string; n: number }[][] = [];
  let release: (() => void) | null = null;
  let fail: Error | null = null;
  const producer = {
    sendBatch: jest.fn(({ topicMessages }) => {
      calls.push(
        topicMessages.map((t: { topic: string; messages: unknown[] }) => ({ topic: t.topic, n: t.messages.length })),
      );
      return new Promise<void>((resolve, reject) => {
        release = () => (fail ? reject(fail) : resolve());
      });
    }),
  } as unknown as Producer;
  return { producer, calls, ack: () => release?.(), failWith: (e: Error) => (fail = e) };
}
const tick = () => new Promise((r) => setImmediate(r));

describe(BatchingPublisher.name, () => {
  it('keeps each produce request under its byte bound, so the broker never refuses a batch for its size', async () => {
    const fake = fakeProducer();
    const sut = new BatchingPublisher(fake.producer, 1000, {}, { maxBatchBytes: 200 * 1024 });
    const big = 'x'.repeat(64 * 1024);
    const all = Array.from({ length: 10 }, (_, i) => sut.publish('t', { key: String(i), value: big }, 5000));
    for (let i = 0; i < 4; i++) {
      await tick(); // the ack's continuation schedules the next flush on the next turn
      await tick();
      fake.ack();
    }
    await Promise.all(all);
    expect(fake.calls.map((c) => c[0].n)).toEqual([3, 3, 3, 1]);
  });

  it('sends a record alone when it is past the bound by itself', async () => {
    const fake = fakeProducer();
    const sut = new BatchingPublisher(fake.producer, 1000, {}, { maxBatchBytes: 10 });
    const all = [sut.publish('t', { value: 'x'.repeat(50) }, 5000), sut.publish('t', { value: 'y' }, 5000)];
    for (let i = 0; i < 2; i++) {
      await tick();
      await tick();
      fake.ack();
    }
    await Promise.all(all);
    expect(fake.calls.map((c) => c[0].n)).toEqual([1, 1]);
  });

  it('sends concurrent publishes as one request and resolves them only after the ack', async () => {
    const fake = fakeProducer();
    const sut = new BatchingPublisher(fake.producer);
    let done = 0;
    const all = [1, 2, 3].map((i) => sut.publish('t', { key: String(i), value: 'v' }, 1000).then(() => done++));
    await tick();
    expect(fake.calls).toEqual([[{ topic: 't', n: 3 }]]);
    expect(done).toBe(0);
    fake.ack();
    await Promise.all(all);
    expect(done).toBe(3);
  });

  it('keeps one request in flight and batches what arrives meanwhile', async () => {
    const fake = fakeProducer();
    const sut = new BatchingPublisher(fake.producer);
    const first = sut.publish('t', { value: 'a' }, 1000);
    await tick();
    const later = [sut.publish('t', { value: 'b' }, 1000), sut.publish('u', { value: 'c' }, 1000)];
    await tick();
    expect(fake.calls).toHaveLength(1);
    fake.ack();
    await first;
    await tick();
    await tick();
    expect(fake.calls[1]).toEqual([
      { topic: 't', n: 1 },
      { topic: 'u', n: 1 },
    ]);
    fake.ack();
    await Promise.all(later);
  });

  it('rejects every record of a failed request', async () => {
    const fake = fakeProducer();
    const sut = new BatchingPublisher(fake.producer);
    fake.failWith(new Error('broker down'));
    const p = sut.publish('t', { value: 'a' }, 1000);
    await tick();
    fake.ack();
    await expect(p).rejects.toThrow('broker down');
  });

  it('withdraws a queued record on timeout so it is never written after the caller gave up', async () => {
    const fake = fakeProducer();
    const sut = new BatchingPublisher(fake.producer);
    const first = sut.publish('t', { value: 'a' }, 20);
    await tick();
    const second = sut.publish('t', { value: 'b' }, 20);
    await expect(first).rejects.toEqual(new PublishTimeoutError(true));
    await expect(second).rejects.toEqual(new PublishTimeoutError(false));
    fake.ack();
    await tick();
    expect(fake.calls).toHaveLength(1);
    expect(sut.pending).toBe(0);
  });

  it('keeps a lane whose request never settles from holding up the other lanes', async () => {
    // A frozen broker: the request for the partition it leads never answers; the other partitions' do.
    const sent: string[][] = [];
    const producer = {
      sendBatch: jest.fn(({ topicMessages }: { topicMessages: { messages: { key: string }[] }[] }) => {
        const keys = topicMessages.flatMap((t) => t.messages.map((m) => m.key));
        sent.push(keys);
        return keys.includes('frozen') ? new Promise<void>(() => {}) : Promise.resolve();
      }),
    } as unknown as Producer;
    const sut = new BatchingPublisher(producer, 1000, {}, { laneOf: (_topic, m) => String(m.key) });
    const stuck = sut.publish('t', { key: 'frozen', value: 'a' }, 200);
    await tick();
    for (const value of ['b', 'c']) await sut.publish('t', { key: 'alive', value }, 1000); // in turn, as a sender waits
    const queuedBehind = sut.publish('t', { key: 'frozen', value: 'd' }, 100);
    await expect(queuedBehind).rejects.toEqual(new PublishTimeoutError(false)); // withdrawn, never sent
    await expect(stuck).rejects.toEqual(new PublishTimeoutError(true));
    expect(sent).toEqual([['frozen'], ['alive'], ['alive']]);
    expect(sut.pending).toBe(0);
  });

  it('puts records in the lane of the partition the default partitioner gives them', () => {
    const laneOf = partitionLanes((topic) => (topic === 't' ? 6 : undefined));
    const lanes = new Set(Array.from({ length: 200 }, (_, i) => laneOf('t', { key: `plant-${i}`, value: 'v' })));
    expect([...lanes].sort()).toEqual(['t:0', 't:1', 't:2', 't:3', 't:4', 't:5']);
    expect(laneOf('t', { key: 'plant-7', value: 'v' })).toBe(laneOf('t', { key: 'plant-7', value: 'w' }));
    expect(laneOf('other', { key: 'plant-7', value: 'v' })).toBe('other:*');
    expect(laneOf('t', { value: 'no key' })).toBe('t:*');
  });
});
