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

  it.each([0, -5, 2 ** 53, 9007199254740993])('refuses id %p (not a positive safe integer)', (id) => {
    expect(validateNewPlant({ id, name: 'x' })).toMatchObject({ ok: false, errors: [{ field: 'id' }] });
  });

  it('refuses a body that is not an object', () => {
    expect(validateNewPlant([1, 2]).ok).toBe(false);
    expect(validateNewPlant(null).ok).toBe(false);
  });
});
