import { eventIdFromKey, newPlantCreatedEvent, parsePlantCreatedEvent } from './plant-created.event';

describe('plant.created event', () => {
  const plant = { id: 42, name: 'Ficus', tag: 'indoor' };

  it('round-trips through its JSON encoding', () => {
    const event = newPlantCreatedEvent(plant, { source: '/test' });
    expect(parsePlantCreatedEvent(Buffer.from(JSON.stringify(event)))).toEqual({ ok: true, event });
    expect(event).toMatchObject({ specversion: '1.0', type: 'plant.created', subject: '42', data: plant });
  });

  it('derives the same event id from the same idempotency key, a different one from another', () => {
    const a = newPlantCreatedEvent(plant, { source: '/s', idempotencyKey: 'msg_1' });
    const b = newPlantCreatedEvent(plant, { source: '/s', idempotencyKey: 'msg_1' });
    expect(a.id).toBe(b.id);
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventIdFromKey('msg_2')).not.toBe(a.id);
  });

  it.each([
    ['not JSON', Buffer.from('{nope'), /not JSON/],
    ['empty', Buffer.alloc(0), /empty/],
    ['wrong type', Buffer.from(JSON.stringify({ ...newPlantCreatedEvent(plant, { source: 's' }), type: 'x' })), /type/],
    [
      'bad data',
      Buffer.from(JSON.stringify({ ...newPlantCreatedEvent(plant, { source: 's' }), data: { id: 1 } })),
      /data.name/,
    ],
  ])('classifies %s as permanent', (_name, value, reason) => {
    const result = parsePlantCreatedEvent(value);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
