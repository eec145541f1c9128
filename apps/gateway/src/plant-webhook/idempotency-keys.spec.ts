import { IdempotencyKeys } from './idempotency-keys';

describe(IdempotencyKeys.name, () => {
  const fern = { id: 1, name: 'Fern' };

  it('knows a key resent with the same plant, and one reused with another', () => {
    const keys = new IdempotencyKeys();
    expect(keys.check('msg_1', fern)).toBe('new');
    expect(keys.check('msg_1', { name: 'Fern', id: 1 })).toBe('same');
    expect(keys.check('msg_1', { ...fern, name: 'Ivy' })).toBe('different');
    expect(keys.check('msg_1', { ...fern, tag: 'indoor' })).toBe('different');
    expect(keys.check('msg_2', { ...fern, name: 'Ivy' })).toBe('new');
  });

  it('forgets keys past their window, and the oldest beyond its size', () => {
    const keys = new IdempotencyKeys(4, 1000);
    keys.check('a', fern, 0);
    expect(keys.check('a', { ...fern, name: 'x' }, 2000)).toBe('new'); // past the window
    for (const k of ['b', 'c', 'd', 'e']) keys.check(k, fern, 2000);
    expect(keys.check('a', { ...fern, name: 'y' }, 2000)).toBe('new'); // the oldest, replaced by 'e'
    expect(keys.check('e', { ...fern, name: 'y' }, 2000)).toBe('different'); // a recent one is still known
  });

  it('tells long keys apart by their digest, and never confuses one with a short key', () => {
    const keys = new IdempotencyKeys();
    const long = 'k'.repeat(255);
    expect(keys.check(long, fern)).toBe('new');
    expect(keys.check(long, fern)).toBe('same');
    expect(keys.check(long, { ...fern, name: 'Ivy' })).toBe('different');
    expect(keys.check(`${'k'.repeat(254)}j`, { ...fern, name: 'Ivy' })).toBe('new');
  });

  it('agrees with a plain model through many evictions and expiries, colliding keys included', () => {
    // 8 keys in a table of 16: probes collide all the time, so removals must shift entries back correctly.
    const max = 8;
    const ttl = 30;
    const keys = new IdempotencyKeys(max, ttl);
    const ring: ({ key: string; name: string; at: number } | null)[] = new Array(max).fill(null);
    let next = 0;
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), (seed >>> 16) % n);
    for (let now = 0; now < 20_000; now++) {
      const key = `k${random(12)}`;
      const name = `n${random(2)}`;
      const at = ring.findIndex((e) => e?.key === key);
      let expected: string;
      if (at >= 0 && now - ring[at]!.at < ttl) expected = ring[at]!.name === name ? 'same' : 'different';
      else {
        if (at >= 0) ring[at] = null;
        ring[next] = { key, name, at: now };
        next = (next + 1) % max;
        expected = 'new';
      }
      expect([now, keys.check(key, { id: 1, name }, now)]).toEqual([now, expected]);
      expect(keys.size).toBe(ring.filter(Boolean).length);
    }
  });
});
