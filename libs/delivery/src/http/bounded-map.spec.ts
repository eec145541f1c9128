import { BoundedMap } from './bounded-map';

describe('BoundedMap', () => {
  it('keeps at most its bound, dropping the least recently used and handing it over', () => {
    const evicted: string[] = [];
    const m = new BoundedMap<string, string>(2, (v) => evicted.push(v));
    m.set('a', 'A');
    m.set('b', 'B');
    m.get('a'); // now b is the least recently used
    m.set('c', 'C');
    expect(evicted).toEqual(['B']);
    expect([m.get('a'), m.get('b'), m.get('c'), m.size]).toEqual(['A', undefined, 'C', 2]);
    m.set('a', 'A2'); // a replaced value is not evicted
    expect(evicted).toEqual(['B']);
    expect(m.drain()).toEqual(['C', 'A2']);
    expect(m.size).toBe(0);
  });
});
