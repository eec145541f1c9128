import { unstorableTexts } from './storable-json';

describe('unstorableTexts', () => {
  it('finds nothing in storable values, paired surrogates included', () => {
    expect(unstorableTexts({ id: 1, name: 'Fern 🌿', tags: ['a', { b: [null, true, 2.5] }], e: {} })).toEqual([]);
    expect(unstorableTexts('plain')).toEqual([]);
    expect(unstorableTexts(null)).toEqual([]);
  });

  it('names every NUL and lone surrogate, in values and property names, at any depth, in document order', () => {
    const value = { a: 'ok', b: ['x', 'bad\u0000'], ['k\uD800']: 'v', c: { d: [{ e: '\uDC00' }] } };
    expect(unstorableTexts(value)).toEqual([
      { path: ['b', '1'], key: false },
      { path: ['k\uD800'], key: true },
      { path: ['c', 'd', '0', 'e'], key: false },
    ]);
    expect(unstorableTexts('\u0000')).toEqual([{ path: [], key: false }]);
  });

  it('reads only own properties, as a parsed body has', () => {
    const inherited = Object.create({ bad: '\u0000' }) as Record<string, unknown>;
    inherited.good = 'fine';
    expect(unstorableTexts(inherited)).toEqual([]);
  });

  it('walks a deep value without recursion', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableTexts(deep)).toHaveLength(1);
  });
});
