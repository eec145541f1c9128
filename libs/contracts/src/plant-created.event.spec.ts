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

  // The worker's check of a consumed event agrees with the gateway's of a webhook: what one refuses, so does the
  // other, so an event written to the topic by anything else cannot reach the store in a form the gateway refuses.
  const event = (data: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ...newPlantCreatedEvent(plant, { source: '/s' }), ...extra, data });
  it.each([
    ['a NUL in an extra property', event({ id: 7, name: 'Ficus', note: 'a\u0000b' }), /data.note must not contain NUL/],
    ['a NUL in a property name', event({ id: 7, name: 'Ficus', 'a\u0000': 1 }), /data\.a\\u0000 is a property name/],
    ['a lone surrogate, nested', event({ id: 7, name: 'F', x: [{ y: '\ud800' }] }), /data.x.0.y must not/],
    ['a NUL in the event id', event(plant, { id: 'e\u0000' }), /^not a valid.*\bid must not contain NUL/],
    ['a leap-second time', event(plant, { time: '2016-12-31T23:59:60Z' }), /time must match format "date-time"/],
    ['a rounded number', event(plant).replace('"data":{', '"data":{"n":9007199254740993,'), /exactly.* at data.n$/],
  ])('refuses %s, as the gateway does', (_case, text, reason) => {
    const result = parsePlantCreatedEvent(Buffer.from(text));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('checks a deeply nested event without running out of stack', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const result = parsePlantCreatedEvent(Buffer.from(event(plant).replace('"data":{', `"data":{"deep":${deep},`)));
    expect(result.ok).toBe(true);
  });
});

describe('a dead-letter reason', () => {
  it('never carries a NUL or a lone surrogate, whatever keys the event had: it is stored as text', () => {
    const hostile = JSON.stringify({
      ...newPlantCreatedEvent({ id: 1, name: 'x' }, { source: '/s' }),
      data: { id: 1, name: 'x', '\u0000': { '\ud800': '\u0000' }, n: { 'k\u0000': 1 } },
    }).replace('"k\\u0000":1}', '"k\\u0000":1e400}'); // a number no double holds, under a hostile key
    // Refused first for the number, then (without it) for the keys: both reasons name the hostile keys.
    for (const value of [hostile, hostile.replace('1e400', '1')]) {
      const result = parsePlantCreatedEvent(Buffer.from(value));
      expect(result.ok).toBe(false);
      // eslint-disable-next-line no-control-regex -- what must not be there
      if (!result.ok) expect(result.reason).not.toMatch(/[\u0000\ud800-\udfff]/u);
    }
  });
});
