// Schemas of the dead letters: the events the worker could not store (plant.created.dlq).
import { always, dateTime, page, ref } from './common';

export const DeadLetter = {
  description: 'A record of plant.created.dlq: an event the worker could not store, and what an operator did to it',
  type: 'object',
  required: ['id', 'status', 'reason', 'deadLetteredAt', 'origin', 'key', 'truncated', 'changedAt', 'changedBy'],
  properties: {
    id: { type: 'string' },
    status: {
      type: 'string',
      enum: ['dead', 'redriving', 'redriven', 'discarded'],
      description: 'dead until redriven (republished to plant.created) or discarded',
    },
    reason: { type: 'string', description: 'Why the worker could not store it' },
    deadLetteredAt: dateTime,
    origin: always(
      {
        topic: { type: ['string', 'null'] },
        partition: { type: ['integer', 'null'] },
        offset: { type: ['string', 'null'] },
        deadLetterPartition: { type: 'integer' },
        deadLetterOffset: { type: 'string' },
      },
      { description: 'Where it was read from, and where it sits in the dead-letter topic' },
    ),
    key: { type: ['string', 'null'], description: 'The record key (the plant id), as text' },
    truncated: { type: 'boolean', description: 'Too large to dead-letter whole: the value was cut' },
    changedAt: { type: ['string', 'null'], format: 'date-time' },
    changedBy: { type: ['string', 'null'], description: "The admin token's name that redrove or discarded it" },
  },
};

export const DeadLetterWithValue = {
  allOf: [
    ref('DeadLetter'),
    {
      type: 'object',
      required: ['value', 'valueBase64', 'headers'],
      properties: {
        value: { type: ['string', 'null'], description: 'The original value as UTF-8 text (invalid bytes replaced)' },
        valueBase64: { type: ['string', 'null'], description: 'The original value, byte for byte' },
        headers: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'The original headers, as UTF-8 text',
        },
      },
    },
  ],
};

export const DeadLetterPage = page('DeadLetter');

export const DeadLetterIds = {
  type: 'object',
  required: ['ids'],
  additionalProperties: false,
  properties: {
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      uniqueItems: true,
      items: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
      description: 'Dead-letter ids, at most 500',
    },
  },
};

export const DeadLetterBulkResult = {
  type: 'object',
  required: ['done', 'skipped'],
  properties: {
    done: { type: 'array', items: { type: 'string' }, description: 'The ids redriven (or discarded) now' },
    skipped: {
      type: 'array',
      description: 'The ids left as they were, with their status (already redriven, discarded) or not_found',
      items: always({ id: { type: 'string' }, status: { type: 'string' } }),
    },
  },
};
