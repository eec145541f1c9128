import { WriteCoalescer } from './write-coalescer';

describe(WriteCoalescer.name, () => {
  it('merges what arrives during a write into the next one, and each caller gets its own write', async () => {
    const writes: string[][] = [];
    let release!: () => void;
    const sut = new WriteCoalescer(async (items: string[]) => {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((r) => (release = r));
      return writes.length;
    }, 100);
    const first = sut.add('a');
    await new Promise((r) => setImmediate(r));
    const later = [sut.add('b'), sut.add('c')];
    await new Promise((r) => setImmediate(r));
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 2]);
    expect(writes).toEqual([['a'], ['b', 'c']]);
  });

  it('lets the first item wait up to lingerMs for others to join its write', async () => {
    const writes: string[][] = [];
    const sut = new WriteCoalescer(async (items: string[]) => void writes.push(items), 100, undefined, 30);
    const first = sut.add('a');
    await new Promise((r) => setTimeout(r, 10));
    const second = sut.add('b');
    await Promise.all([first, second]);
    expect(writes).toEqual([['a', 'b']]);
  });

  it('bounds a write by the items’ sizes, but always takes at least one', async () => {
    const writes: number[][] = [];
    const sut = new WriteCoalescer(
      async (items: number[]) => void writes.push(items),
      5,
      (n) => n,
    );
    await Promise.all([sut.add(3), sut.add(2), sut.add(4), sut.add(9)]);
    expect(writes).toEqual([[3, 2], [4], [9]]);
  });

  it('rejects every caller of a failed write, and goes on with the next', async () => {
    let fail = true;
    const sut = new WriteCoalescer(async (items: string[]) => {
      if (fail) throw new Error('db down');
      return items.length;
    }, 10);
    await expect(Promise.all([sut.add('a'), sut.add('b')])).rejects.toThrow('db down');
    fail = false;
    await expect(sut.add('c')).resolves.toBe(1);
  });
});
