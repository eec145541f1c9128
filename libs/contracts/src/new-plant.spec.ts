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
