// The schemas of Plant Store's operational webhooks: per event type, its `data` and the body that carries it.
import { OPERATIONAL_EVENT_TYPES, OperationalEventType, operationalSchemaNames } from '../../operational-events';
import { always, dateTime, ref } from './common';

/** The `data` of each operational event: what it says, and an example (a test send of that type sends it). */
const operationalData: Record<OperationalEventType, { description: string; properties: object; example: object }> = {
  'subscription.disabled': {
    description: 'The worker disabled a subscription (its subscriber answered 410 Gone, or kept failing)',
    properties: {
      subscriptionId: { type: 'string', format: 'uuid' },
      reason: { type: 'string', description: 'Also its `disabledReason`' },
      disabledAt: dateTime,
    },
    example: {
      subscriptionId: '0b9d7f5e-3c1a-4e8b-9f2d-6a5c4b3a2910',
      reason: 'the subscriber answered 410 Gone',
      disabledAt: '2025-01-01T12:00:00.000Z',
    },
  },
  'subscription.circuit_opened': {
    description:
      "A subscription's circuit opened after consecutive failures: its deliveries wait, and a probe is tried on a back-off",
    properties: {
      subscriptionId: { type: 'string', format: 'uuid' },
      openedAt: dateTime,
      consecutiveFailures: { type: 'integer', minimum: 1 },
      lastError: {
        type: ['string', 'null'],
        description: 'The last failure: an HTTP status or why there was no answer',
      },
    },
    example: {
      subscriptionId: '0b9d7f5e-3c1a-4e8b-9f2d-6a5c4b3a2910',
      openedAt: '2025-01-01T12:00:00.000Z',
      consecutiveFailures: 5,
      lastError: 'HTTP 503',
    },
  },
  'subscription.circuit_closed': {
    description: "A subscription's circuit closed: a probe succeeded and its waiting deliveries go out in order",
    properties: {
      subscriptionId: { type: 'string', format: 'uuid' },
      closedAt: dateTime,
      openedAt: { ...dateTime, type: ['string', 'null'], description: 'When it had opened' },
    },
    example: {
      subscriptionId: '0b9d7f5e-3c1a-4e8b-9f2d-6a5c4b3a2910',
      closedAt: '2025-01-01T12:30:00.000Z',
      openedAt: '2025-01-01T12:00:00.000Z',
    },
  },
  'delivery.exhausted': {
    description:
      'A New Plant delivery failed for good: its last attempt failed (DELIVERY_RETRY_SCHEDULE ran out), or the ' +
      'subscriber answered 410 Gone. It can still be retried (POST /deliveries/{id}/retry)',
    properties: {
      deliveryId: { type: 'string', format: 'uuid' },
      subscriptionId: { type: 'string', format: 'uuid' },
      eventId: { type: 'string', format: 'uuid' },
      plantId: { type: 'integer', format: 'int64' },
      attempts: { type: 'integer', minimum: 1 },
      lastAttempt: always({
        attemptedAt: dateTime,
        status: { type: ['integer', 'null'], description: 'HTTP status; null when there was no answer' },
        error: { type: ['string', 'null'] },
      }),
      heldBack: {
        type: 'integer',
        minimum: 0,
        description:
          "How many more of this subscription's deliveries failed for good since the previous delivery.exhausted " +
          'about it, and were not told one by one: one is sent per subscription per minute at most (list them ' +
          'with GET /deliveries?subscriptionId=…&status=failed)',
      },
    },
    example: {
      deliveryId: '5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0',
      subscriptionId: '0b9d7f5e-3c1a-4e8b-9f2d-6a5c4b3a2910',
      eventId: 'e7c6b5a4-9382-4716-a5b4-c3d2e1f0a9b8',
      plantId: 42,
      attempts: 8,
      lastAttempt: { attemptedAt: '2025-01-02T15:00:00.000Z', status: 503, error: null },
      heldBack: 0,
    },
  },
  'dead_letter.created': {
    description: 'An event the worker could not store was dead-lettered (see GET /dead-letters/{id})',
    properties: {
      deadLetterId: { type: 'string' },
      reason: { type: 'string' },
      deadLetteredAt: dateTime,
      origin: always({
        topic: { type: ['string', 'null'] },
        partition: { type: ['integer', 'null'] },
        offset: { type: ['string', 'null'] },
      }),
      key: { type: ['string', 'null'], description: 'The record key (the plant id), non-ASCII bytes escaped' },
      truncated: { type: 'boolean' },
    },
    example: {
      deadLetterId: '17',
      reason: 'not a NewPlant: name is required',
      deadLetteredAt: '2025-01-01T12:00:00.000Z',
      origin: { topic: 'plant.created', partition: 3, offset: '1234' },
      key: '42',
      truncated: false,
    },
  },
};

/** The example of a type's `data`, for a test send. */
export const operationalExample = (type: OperationalEventType) => operationalData[type].example;

/** Per type, `<Name>Event` (the body: `{type, timestamp, data}`) and `<Name>Data`. */
export function operationalEventSchemas(): Record<string, unknown> {
  return Object.fromEntries(
    OPERATIONAL_EVENT_TYPES.flatMap((type) => {
      const names = operationalSchemaNames(type);
      const { description, properties, example } = operationalData[type];
      return [
        [names.data, { ...always(properties as Record<string, unknown>), description, examples: [example] }],
        [
          names.event,
          {
            ...always({
              type: { type: 'string', const: type },
              timestamp: { ...dateTime, description: 'When the event happened' },
              data: ref(names.data),
            }),
            description: `The body of a ${type} operational webhook`,
          },
        ],
      ];
    }),
  );
}
