import { fc, test } from '@fast-check/jest';
import { validateNewPlant } from './new-plant';

const newPlant = fc.record(
  { name: fc.string(), id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), tag: fc.string() },
  { requiredKeys: ['name', 'id'] },
);

describe('validateNewPlant', () => {
  test.prop([newPlant])('accepts every well-formed NewPlant', (plant) => {
    expect(validateNewPlant(plant).ok).toBe(true);
  });

  test.prop([newPlant, fc.double({ noInteger: true })])('rejects a non-integer id', (plant, bad) => {
    expect(validateNewPlant({ ...plant, id: bad })).toMatchObject({ ok: false, errors: [{ field: 'id' }] });
  });

  it('allows extra properties, as the contract does', () => {
    expect(validateNewPlant({ id: 1, name: 'Monstera', colour: 'green' }).ok).toBe(true);
  });

  it('names each offending field', () => {
    const result = validateNewPlant({ id: '1', tag: 7 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field).sort()).toEqual(['id', 'name', 'tag']);
  });

  it.each([0, -5, 2 ** 53 - 1, -(2 ** 53 - 1)])('accepts id %p, as the published NewPlant does (any int64)', (id) => {
    expect(validateNewPlant({ id, name: 'x' }).ok).toBe(true);
  });

  it.each([2 ** 53, 2 ** 53 + 2, -(2 ** 53)])('refuses id %p (beyond what a JSON number carries exactly)', (id) => {
    expect(validateNewPlant({ id, name: 'x' })).toMatchObject({ ok: false, errors: [{ field: 'id' }] });
  });

  it('refuses a body that is not an object', () => {
    expect(validateNewPlant([1, 2]).ok).toBe(false);
    expect(validateNewPlant(null).ok).toBe(false);
  });
});

describe('validateNewPlant: text the store can hold exactly', () => {
  it.each([
    ['a NUL in name', { id: 1, name: 'Ficus\u0000' }, 'name'],
    ['a NUL in tag', { id: 1, name: 'Ficus', tag: '\u0000' }, 'tag'],
    ['a lone high surrogate', { id: 1, name: 'Fern \ud83c' }, 'name'],
    ['a lone low surrogate', { id: 1, name: 'Fern', tag: '\udc00x' }, 'tag'],
  ])('refuses %s, naming the field', (_case, body, field) => {
    expect(validateNewPlant(body)).toEqual({
      ok: false,
      errors: [{ field, message: expect.stringMatching(/NUL .* unpaired surrogate/) }],
    });
  });

  it('accepts any other Unicode, astral characters included', () => {
    expect(validateNewPlant({ id: 1, name: 'Fern 🌿 \u00e9\u4e2d', tag: '\u200b' }).ok).toBe(true);
  });
});

describe('validateNewPlant: the whole body storable, property names included', () => {
  it.each([
    ['a NUL in an extra property', { id: 7, name: 'Ficus', note: 'a\u0000b' }, 'note', /NUL/],
    ['a NUL in a property name', { id: 7, name: 'Ficus', 'no\u0000te': 'x' }, 'no\\u0000te', /property name/],
    ['a lone surrogate, nested', { id: 7, name: 'Ficus', care: { water: ['ok', '\ud800'] } }, 'care.water.1', /NUL/],
    ['a lone surrogate in a nested key', { id: 7, name: 'Ficus', care: { '\udfff': 1 } }, 'care.\\udfff', /name/],
    ['a slash in the path', { id: 7, name: 'Ficus', 'a/b': '\u0000' }, 'a~1b', /NUL/],
  ])('refuses %s, naming its path', (_case, body, field, message) => {
    expect(validateNewPlant(body)).toEqual({ ok: false, errors: [{ field, message: expect.stringMatching(message) }] });
  });

  it('names every unstorable field of a body at once', () => {
    const result = validateNewPlant({ id: 1, name: '\u0000', tag: '\ud800', extra: { deep: ['\u0000'] } });
    expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual(['name', 'tag', 'extra.deep.0']);
  });

  it('accepts paired surrogates, and every other character, in values and keys', () => {
    expect(validateNewPlant({ id: 1, name: 'x', '🌿': { 'é\u200b': ['\u0001\uffff🌵'] } }).ok).toBe(true);
  });
});
