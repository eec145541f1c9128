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

  describe('one bad item among many', () => {
    /** A fake database that refuses a whole statement holding a NUL, as PostgreSQL does (22021), and stores
     * nothing of it; `down` makes it fail as a lost connection does. */
    const fakeDatabase = () => {
      const db = { statements: [] as string[][], stored: [] as string[], down: false };
      const write = async (items: string[]) => {
        db.statements.push(items);
        if (db.down) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: undefined });
        const bad = items.find((i) => i.includes('\u0000'));
        if (bad !== undefined)
          throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
        db.stored.push(...items);
        return items.length;
      };
      return { db, write };
    };
    const settled = (promises: Promise<unknown>[]) =>
      Promise.allSettled(promises).then((r) => r.map((x) => (x.status === 'fulfilled' ? 'stored' : x.reason.code)));

    it('splits a write refused for its data until the bad item is alone: it alone is refused, the rest stored', async () => {
      const { db, write } = fakeDatabase();
      const sut = new WriteCoalescer(write, 100);
      const items = Array.from({ length: 8 }, (_, i) => (i === 5 ? 'O\u0000K\u0000' : `reply ${i}`));
      expect(await settled(items.map((i) => sut.add(i)))).toEqual([
        ...Array(5).fill('stored'),
        '22021',
        'stored',
        'stored',
      ]);
      expect(db.stored).toEqual(items.filter((_, i) => i !== 5)); // in order, each once
      // 8 refused, 4 stored, 4 refused, 2 refused, 1 refused alone, 1 stored, 2 stored: log2(8) levels.
      expect(db.statements.map((s) => s.length)).toEqual([8, 4, 4, 2, 1, 1, 2]);
    });

    it('isolates several bad items, each refused with its own reason', async () => {
      const { db, write } = fakeDatabase();
      const sut = new WriteCoalescer(write, 100);
      const items = ['a', '\u0000b', 'c', 'd', 'e', '\u0000f', 'g'];
      expect(await settled(items.map((i) => sut.add(i)))).toEqual([
        'stored',
        '22021',
        'stored',
        'stored',
        'stored',
        '22021',
        'stored',
      ]);
      expect(db.stored).toEqual(['a', 'c', 'd', 'e', 'g']);
    });

    it('does not split a write that failed for another reason: every caller gets the failure, to retry whole', async () => {
      const { db, write } = fakeDatabase();
      db.down = true;
      const sut = new WriteCoalescer(write, 100);
      const outcome = await Promise.allSettled(['a', '\u0000b', 'c'].map((i) => sut.add(i)));
      expect(outcome.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(db.statements).toEqual([['a', '\u0000b', 'c']]); // one statement: nothing split
      db.down = false;
      await expect(sut.add('d')).resolves.toBe(1);
    });
  });
});
