import { BoundedMap } from './bounded-map';

describe(BoundedMap.name, () => {
  it('keeps the latest entries, never more than its capacity', () => {
    const map = new BoundedMap<string, number>(4);
    for (let i = 0; i < 100; i++) map.set(`k${i}`, i);
    expect(map.size).toBeLessThanOrEqual(4);
    expect(map.get('k99')).toBe(99);
    expect(map.get('k98')).toBe(98);
    expect(map.get('k0')).toBeUndefined();
  });

  it('answers the newest value of a key, in either generation', () => {
    const map = new BoundedMap<string, number>(4);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3); // a and b now in the previous generation
    map.set('a', 4);
    expect(map.get('a')).toBe(4);
    expect(map.get('b')).toBe(2);
  });
});
