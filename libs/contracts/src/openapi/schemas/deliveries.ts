// Schemas of the deliveries: one per subscriber and event, with their attempts; replaying and retrying them.
import { OPERATIONAL_EVENT_TYPES } from '../../operational-events';
import { always, dateTime, page, ref } from './common';

export const Delivery = always({
  id: { type: 'string', format: 'uuid' },
  subscriptionId: { type: 'string', format: 'uuid' },
  eventId: { type: 'string', format: 'uuid', description: 'The message id: `webhook-id`, the same on every retry' },
  eventType: {
    type: 'string',
    enum: ['plant.created', ...OPERATIONAL_EVENT_TYPES],
    description: 'plant.created: a New Plant webhook; any other: an operational event',
  },
  plantId: { type: ['integer', 'null'], format: 'int64', description: 'null for an operational event' },
  status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
  attempts: { type: 'integer' },
  nextAttemptAt: { ...dateTime, type: ['string', 'null'] },
  createdAt: dateTime,
  updatedAt: dateTime,
});

export const DeliveryAttempt = always({
  attemptedAt: dateTime,
  status: { type: ['integer', 'null'], description: 'HTTP status; null on a network error' },
  latencyMs: { type: 'integer' },
  error: { type: ['string', 'null'] },
  responseBody: {
    type: ['string', 'null'],
    description:
      "First KiB of the response, with the subscription's token and its URL's credentials replaced by " +
      '`[redacted]` (a receiver may echo them)',
  },
  signature: {
    type: ['string', 'null'],
    description: 'The `webhook-signature` sent; null when the attempt was refused before it was signed',
  },
});

export const SentRequest = {
  type: 'object',
  required: ['body', 'headers'],
  properties: {
    body: { type: 'string', description: 'The exact bytes sent (and signed)' },
    headers: {
      type: ['object', 'null'],
      additionalProperties: { type: 'string' },
      description:
        "The headers of the last attempt, signature included; the subscriber's own token and the values of its " +
        'secret headers are replaced by placeholders (custom headers as the subscription has them now). Null ' +
        'before the first attempt',
    },
  },
};

export const DeliveryWithAttempts = {
  allOf: [
    ref('Delivery'),
    {
      type: 'object',
      required: ['request', 'attemptLog'],
      properties: {
        request: ref('SentRequest'),
        attemptLog: {
          type: 'array',
          items: ref('DeliveryAttempt'),
          maxItems: 20,
          description: 'Its newest 20 attempts, oldest first (`attempts` counts every one).',
        },
      },
    },
  ],
};

export const DeliveryPage = page('Delivery');

export const Recovery = {
  type: 'object',
  required: ['requeued', 'status', 'complete', 'cursor'],
  properties: {
    requeued: { type: 'integer', description: 'Deliveries re-queued by this call' },
    status: { type: 'string', enum: ['failed', 'all'], description: 'What was replayed' },
    complete: {
      type: 'boolean',
      description:
        'Every delivery since the time is re-queued; false: the call stopped at its bound, go on with `cursor`',
    },
    cursor: {
      type: ['string', 'null'],
      description: 'status=all, not complete: pass as `cursor` (with the same `since`) to go on; null otherwise',
    },
    lookedAt: {
      type: 'integer',
      description: 'status=all: deliveries (of every subscriber) this call looked at, for the progress',
    },
  },
};

export const DeliveryRetryFilter = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    subscriptionId: { type: 'string', format: 'uuid' },
    plantId: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
    since: {
      type: 'string',
      format: 'date-time',
      description: 'Created at or after; a real instant (no leap second)',
    },
    until: { type: 'string', format: 'date-time', description: 'Created before; a real instant (no leap second)' },
  },
};
