import { PublishBatcher } from './publish-batcher';

describe(PublishBatcher.name, () => {
  it('sends what is published in one turn together, and what comes meanwhile in the next request', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const b = new PublishBatcher<number, string>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
      return items.map((i) => `ok ${i}`);
    });
    const first = [1, 2, 3].map((i) => b.publish(i, 10));
    await new Promise((r) => setImmediate(r));
    const second = [4, 5].map((i) => b.publish(i, 10)); // while the first request is on the wire
    release();
    expect(await Promise.all([...first, ...second])).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5']);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(b.idle).toBe(true);
  });

  it('keeps each request within its limits, a message over the byte limit alone', async () => {
    const batches: number[][] = [];
    const b = new PublishBatcher<number, number>(async (items) => (batches.push(items), items), {
      maxMessages: 2,
      maxBytes: 100,
    });
    await Promise.all([b.publish(1, 10), b.publish(2, 10), b.publish(3, 10), b.publish(4, 500), b.publish(5, 10)]);
    expect(batches).toEqual([[1, 2], [3], [4], [5]]);
  });

  it('fails every message of a request that failed, and only the one answered with an Error', async () => {
    const b = new PublishBatcher<number, number>(async (items) =>
      items.length > 1 ? items.map((i) => (i === 2 ? new Error('too large') : i)) : Promise.reject(new Error('down')),
    );
    const outcomes = await Promise.allSettled([b.publish(1, 1), b.publish(2, 1), b.publish(3, 1)]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      1,
      'too large',
      3,
    ]);
    expect(await b.publish(4, 1).catch((e: Error) => e.message)).toBe('down');
  });

  it('keeps up to maxInFlight requests on the wire, and sends what waited when one is answered', async () => {
    const batches: number[][] = [];
    const answers: (() => void)[] = [];
    const b = new PublishBatcher<number, number>(
      async (items) => {
        batches.push(items);
        await new Promise<void>((r) => answers.push(r));
        return items;
      },
      { maxMessages: 2, maxBytes: 100, maxInFlight: 2 },
    );
    const all = Promise.all([1, 2, 3, 4, 5, 6].map((i) => b.publish(i, 1)));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]); // two on the wire; 5 and 6 wait
    answers.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(batches[2]).toEqual([5, 6]);
    while (answers.length > 0) answers.shift()!();
    expect(await all).toEqual([1, 2, 3, 4, 5, 6]);
    expect(b.idle).toBe(true);
  });

  it('sends a request that failed whole again one message at a time, when splitOnFailure says so', async () => {
    const sizes: number[] = [];
    const send = async (items: number[]) => {
      sizes.push(items.length);
      if (items.length > 1) throw new Error(items.includes(-1) ? 'gone' : 'too large together');
      return items.map((i) => (i === 2 ? new Error('too large') : i));
    };
    const b = new PublishBatcher<number, number>(send, {
      maxMessages: 10,
      maxBytes: 100,
      splitOnFailure: (err) => (err as Error).message !== 'gone',
    });
    const settled = (ps: Promise<number>[]) =>
      Promise.allSettled(ps).then((os) =>
        os.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
      );
    expect(await settled([1, 2, 3].map((i) => b.publish(i, 1)))).toEqual([1, 'too large', 3]);
    expect(sizes).toEqual([3, 1, 1, 1]);
    expect(await settled([-1, 4].map((i) => b.publish(i, 1)))).toEqual(['gone', 'gone']); // not split
    expect(sizes).toEqual([3, 1, 1, 1, 2]);
  });
});
