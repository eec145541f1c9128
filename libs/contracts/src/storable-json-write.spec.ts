import { toStorableJson, toStorableText } from './storable-json';

describe('toStorableJson', () => {
  it('escapes every NUL and unpaired surrogate, property names included, at any depth', () => {
    const json = toStorableJson({ 'k\u0000': 'v\u0000', list: ['\uD800', { deep: 'x\u0000' }], n: 1, none: null });
    expect(JSON.parse(json)).toEqual({
      'k\\u0000': 'v\\u0000',
      list: ['\\ud800', { deep: 'x\\u0000' }],
      n: 1,
      none: null,
    });
  });

  it('leaves a reply read as UTF-8 from UTF-16 bytes printable and storable', () => {
    expect(toStorableText(Buffer.from([0x4f, 0x00, 0x4b, 0x00]).toString('utf8'))).toBe('O\\u0000K\\u0000');
  });
});
