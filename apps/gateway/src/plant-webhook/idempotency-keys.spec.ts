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
    const keys = new IdempotencyKeys(2, 1000);
    keys.check('a', fern, 0);
    expect(keys.check('a', { ...fern, name: 'x' }, 2000)).toBe('new'); // past the window
    keys.check('b', fern, 2000);
    keys.check('c', fern, 2000);
    expect(keys.check('a', fern, 2000)).toBe('new'); // 'a' was the oldest of three in a map of two
  });
});
