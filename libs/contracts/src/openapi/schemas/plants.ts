// Schemas of the read API: the plants as stored.
import { dateTime, page, ref } from './common';

export const StoredPlant = {
  description:
    'A NewPlant as stored. Ids are any int64 within ±(2^53 - 1): the New Plant webhook refuses larger ones with ' +
    '422, since a JSON number beyond that cannot be carried exactly. It refuses (422 naming the path) any other ' +
    'number a double would round, and a NUL or an unpaired surrogate in any string or property name at any ' +
    'depth (PostgreSQL cannot hold them), so what it answers 200 for is stored as sent. Its `webhook-id` or ' +
    '`Idempotency-Key` is 1 to 255 visible ASCII characters, else 400 naming the header.',
  allOf: [
    ref('NewPlant'),
    {
      type: 'object',
      required: ['createdAt', 'updatedAt', 'lastEventId'],
      properties: { createdAt: dateTime, updatedAt: dateTime, lastEventId: { type: 'string', format: 'uuid' } },
    },
  ],
};

export const PlantPage = page('StoredPlant');
