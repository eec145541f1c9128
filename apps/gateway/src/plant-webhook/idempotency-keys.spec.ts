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
    expect(keys.check('a', { ...fern, name: 'y' }, 2000)).toBe('new'); // one of the oldest, dropped with its half
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
});
