// Schemas of the operations Plant Store adds, and of its operational webhooks. The webhook's own schemas (Plant,
// NewPlant, Error) stay in ./seed.ts, untouched.
import { PORTAL_LINK_LIFETIME } from '../portal-link-lifetime';
import { OPERATIONAL_EVENT_TYPES, OperationalEventType, operationalSchemaNames } from '../operational-events';
import { RESERVED_HEADER_LIST } from '../reserved-headers';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
// Kept, and forwarded on every delivery: bounded. A token goes out as a header, so only what a header carries.
const subscriberUrl = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 };
const subscriberToken = { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[\\x21-\\x7e]+$' };
// Flow control per subscriber (docs/delivery.md): null or absent means no limit of its own.
const maxDeliveriesPerSecond = {
  type: ['number', 'null'],
  exclusiveMinimum: 0,
  maximum: 100000,
  description:
    'At most this many delivery attempts a second to this subscriber, across every worker replica (each sends its ' +
    'share: the limit divided by the live replicas). A fraction is allowed: 0.5 is one every two seconds. null: no limit',
};
const maxConcurrency = {
  type: ['integer', 'null'],
  minimum: 1,
  maximum: 10000,
  description:
    'At most this many requests to this subscriber at once, across every worker replica (split between them). ' +
    "null: only the worker's own bound, DELIVERY_CONCURRENCY_PER_SUBSCRIPTION per replica",
};
// A subscription's custom headers (libs/delivery/src/custom-headers.ts checks names, reserved headers and the
// total; 422 names the header). The reserved names are read from the one list there is (reserved-headers.ts).
const HEADER_RULES =
  'Names are RFC 9110 tokens (at most 64 characters, compared case-insensitively); values visible ASCII, space and ' +
  'tab (no CR or LF), at most 1,024 characters; at most 20 headers and 8,192 bytes of names and values, plain and ' +
  `secret together. Refused with 422 naming the header and why: ${RESERVED_HEADER_LIST} (hop-by-hop headers, the ` +
  "body's framing, every header Plant Store sets, a browser's cookies and what proxies say of a request), and " +
  '`authorization` while the subscription has a token.';
const headerValue = { type: 'string', maxLength: 1024 };
const headerMap = (description: string, nullable = false) => ({
  type: 'object',
  maxProperties: 20,
  additionalProperties: nullable ? { ...headerValue, type: ['string', 'null'] } : headerValue,
  description: `${description} ${HEADER_RULES}`,
});
/**
 * A response object whose every property is always present (null where it has no value). Saying so makes the
 * generated client's types exact: the console and the CLI need not guard against fields that are never missing.
 */
const always = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  ...extra,
  required: Object.keys(properties),
  properties,
});
const kind = {
  type: 'string',
  enum: ['plants', 'operational'],
  description:
    "plants: New Plant webhooks. operational: Plant Store's own events (subscription.disabled, " +
    'delivery.exhausted, dead_letter.created, subscription.circuit_opened / circuit_closed), never a plant. Set ' +
    'when created, for good',
};
const eventTypes = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: [...OPERATIONAL_EVENT_TYPES] },
  description: 'operational only: the event types it receives; absent (or null) for all of them',
};
const page = (item: string) => ({
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: ref(item) },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last' },
  },
});

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
function operationalEventSchemas(): Record<string, unknown> {
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

export const addedSchemas: Record<string, unknown> = {
  Problem: {
    description: 'RFC 9457 problem details, served as application/problem+json',
    type: 'object',
    required: ['type', 'title', 'status'],
    properties: {
      type: { type: 'string', format: 'uri-reference' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      instance: { type: 'string' },
      errors: {
        type: 'array',
        items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
      },
    },
  },
  StoredPlant: {
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
  },
  PlantPage: page('StoredPlant'),
  SubscriptionCreate: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: subscriberUrl,
      token: { ...subscriberToken, description: 'Sent as `Authorization: Bearer <token>`' },
      secret: {
        type: 'string',
        pattern: '^whsec_[A-Za-z0-9+/=]{32,}$',
        description: 'Standard Webhooks secret (symmetric only); one is generated when absent',
      },
      signature: {
        type: 'string',
        enum: ['symmetric', 'asymmetric'],
        default: 'symmetric',
        description:
          'symmetric: HMAC-SHA256 (`v1,`) with a `whsec_` secret shared with the subscriber. asymmetric: Ed25519 ' +
          '(`v1a,`); the subscriber verifies with the `whpk_` public key and no secret is shared.',
      },
      description: { type: 'string', maxLength: 500 },
      filter: ref('SubscriptionFilter'),
      kind: { ...kind, default: 'plants' },
      eventTypes,
      maxDeliveriesPerSecond,
      maxConcurrency,
      headers: headerMap('Headers sent with each delivery, name → value; shown in responses.'),
      secretHeaders: headerMap(
        'Headers sent with each delivery whose values are secret (an API key): sealed at rest and never shown ' +
          'again (responses list their names in `secretHeaderNames`; the headers an attempt sent show a ' +
          'placeholder; a receiver echoing one has it redacted).',
      ),
    },
  },
  SubscriptionUpdate: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      url: subscriberUrl,
      token: { ...subscriberToken, type: ['string', 'null'] },
      enabled: { type: 'boolean' },
      description: { type: 'string', maxLength: 500 },
      filter: ref('SubscriptionFilter'),
      eventTypes: { ...eventTypes, type: ['array', 'null'] },
      maxDeliveriesPerSecond,
      maxConcurrency,
      headers: headerMap(
        'A merge patch of the plain headers: a value sets a header, null removes it, names not given stay. A name ' +
          'set here stops being a secret header.',
        true,
      ),
      secretHeaders: headerMap(
        'A merge patch of the secret headers: a value sets one, null removes it, names not given stay. A name set ' +
          'here stops being a plain header.',
        true,
      ),
    },
  },
  SubscriptionFilter: {
    description:
      'Which plants this subscriber receives; every condition given must hold, `{}` (the default) lets all through. ' +
      'Applied where deliveries are written: a plant filtered out gets no delivery row for this subscriber.',
    type: 'object',
    additionalProperties: false,
    properties: {
      tags: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        items: { type: 'string', minLength: 1, maxLength: 200 },
        description: 'Only plants whose tag is one of these (a plant without a tag does not match)',
      },
      plantIds: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        description: 'Only plant ids in this range, both ends included',
        properties: {
          min: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
          max: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        },
      },
    },
  },
  Subscription: always({
    id: { type: 'string', format: 'uuid' },
    url: {
      type: 'string',
      description:
        'Whole for a write token; a read token sees it without user-info or fragment, each query value ' +
        'replaced by `[redacted]` (query values are often credentials)',
    },
    description: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    disabledReason: { type: ['string', 'null'] },
    hasToken: { type: 'boolean' },
    filter: ref('SubscriptionFilter'),
    kind,
    eventTypes: { ...eventTypes, type: ['array', 'null'] },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Custom headers sent with each delivery, name → value',
    },
    secretHeaderNames: {
      type: 'array',
      items: { type: 'string' },
      description: 'The names of its secret headers, also sent with each delivery; their values are never shown',
    },
    signature: { type: 'string', enum: ['symmetric', 'asymmetric'] },
    publicKey: { type: ['string', 'null'], description: 'asymmetric: the `whpk_` key that verifies `v1a,`' },
    previousPublicKey: {
      type: ['string', 'null'],
      description: 'asymmetric, after a rotation: the key that verifies the old signature still sent beside the new',
    },
    maxDeliveriesPerSecond,
    maxConcurrency,
    pausedUntil: {
      type: ['string', 'null'],
      format: 'date-time',
      description:
        'The subscriber answered 429 or 503 with Retry-After: none of its deliveries is sent before this time ' +
        '(at most DELIVERY_PAUSE_MAX ahead), and none of their attempts is spent meanwhile. null: not paused',
    },
    circuit: ref('SubscriptionCircuit'),
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  SubscriptionCircuit: always({
    state: {
      type: 'string',
      enum: ['closed', 'open', 'half_open'],
      description:
        'closed: deliveries go. open: after DELIVERY_CIRCUIT_FAILURES consecutive failures its deliveries wait ' +
        '(no attempt spent) but for one probe at nextProbeAt. half_open: that probe is being sent; its success ' +
        'closes the circuit and releases the backlog in order, its failure opens it again for twice as long',
    },
    since: {
      ...dateTime,
      type: ['string', 'null'],
      description: 'open or half-open: when it opened; closed: when it closed again (null: never opened)',
    },
    lastError: {
      type: ['string', 'null'],
      description: 'The last failure: `HTTP 500`, a timeout, a refused connection',
    },
    consecutiveFailures: { type: 'integer', minimum: 0 },
    failingSince: {
      ...dateTime,
      type: ['string', 'null'],
      description: 'Failing without a success since then; after DELIVERY_DISABLE_AFTER the subscription is disabled',
    },
    nextProbeAt: { ...dateTime, type: ['string', 'null'], description: 'open: when the next probe may go' },
  }),
  SubscriptionWithSecret: {
    allOf: [
      ref('Subscription'),
      {
        type: 'object',
        properties: {
          secret: { type: 'string', description: 'symmetric only: the `whsec_` secret, shown in this response only' },
        },
      },
    ],
  },
  Delivery: always({
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
  }),
  DeliveryAttempt: always({
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
  }),
  SentRequest: {
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
  },
  DeliveryWithAttempts: {
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
  },
  SubscriptionTest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      plant: {
        allOf: [{ $ref: '#/components/schemas/NewPlant' }],
        description: 'plants: the plant to send; a sample one when absent',
      },
      eventType: {
        type: 'string',
        enum: [...OPERATIONAL_EVENT_TYPES],
        description:
          "operational: the event type to send an example of (its schema's example); the first it receives when absent",
      },
    },
  },
  SubscriptionTestResult: {
    description:
      'A signed New Plant (or, to an operational subscription, an example event) sent once to the subscription, now; ' +
      'not stored, not retried',
    type: 'object',
    required: ['request', 'response', 'succeeded'],
    properties: {
      request: ref('SentRequest'),
      response: {
        type: 'object',
        required: ['status', 'latencyMs', 'error', 'body'],
        properties: {
          status: { type: ['integer', 'null'], description: 'HTTP status; null when there was no answer' },
          latencyMs: { type: 'integer' },
          error: { type: ['string', 'null'], description: 'Why there was no answer (timeout, refused, SSRF guard)' },
          body: { type: ['string', 'null'], description: 'First KiB of the response' },
        },
      },
      succeeded: { type: 'boolean', description: 'A 2xx answer: a real delivery would have succeeded' },
    },
  },
  PortalLinkCreate: {
    type: 'object',
    additionalProperties: false,
    properties: {
      lifetimeSeconds: {
        type: 'integer',
        minimum: PORTAL_LINK_LIFETIME.min,
        maximum: PORTAL_LINK_LIFETIME.max,
        default: PORTAL_LINK_LIFETIME.default,
        description: 'How long the link opens the portal: 1 minute to 30 days; 7 days when absent',
      },
      description: { type: 'string', maxLength: 500, description: 'Who it is for, shown in the list' },
    },
  },
  PortalLink: always({
    id: { type: 'string', format: 'uuid' },
    subscriptionId: { type: 'string', format: 'uuid' },
    description: { type: ['string', 'null'] },
    state: {
      type: 'string',
      enum: ['active', 'expired', 'revoked'],
      description: 'active until it expires or is revoked; a revoked or expired link is refused with 401',
    },
    createdBy: { type: 'string', description: "The admin token's name that made it" },
    createdAt: dateTime,
    expiresAt: dateTime,
    revokedAt: { ...dateTime, type: ['string', 'null'] },
    revokedBy: { type: ['string', 'null'] },
    lastUsedAt: { ...dateTime, type: ['string', 'null'], description: 'Its last use, to the minute' },
  }),
  PortalLinkWithToken: {
    allOf: [
      ref('PortalLink'),
      {
        type: 'object',
        required: ['token', 'url'],
        properties: {
          token: {
            type: 'string',
            pattern: '^psp_[A-Za-z0-9_-]{43}$',
            description: 'The bearer token (`portalAuth`), shown in this response only; only its SHA-256 is kept',
          },
          url: {
            type: 'string',
            format: 'uri',
            description:
              "The console's portal page with the token in its fragment (`/console/portal#token=…`): a fragment " +
              'is never sent to a server, so the token stays out of access logs and Referer headers',
          },
        },
      },
    ],
  },
  PortalSession: always({
    subscriptionId: { type: 'string', format: 'uuid' },
    linkId: { type: 'string', format: 'uuid' },
    expiresAt: dateTime,
  }),
  DeliveryPage: page('Delivery'),
  Recovery: {
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
  },
  BackfillCreate: {
    type: 'object',
    additionalProperties: false,
    properties: {
      since: {
        ...dateTime,
        description: 'Only plants changed (stored or updated) at or after this time; every plant when absent',
      },
      ratePerSecond: {
        type: 'integer',
        minimum: 1,
        maximum: 1000,
        default: 50,
        description: 'Deliveries per second at most, so that live deliveries keep their latency',
      },
    },
  },
  Backfill: always({
    id: { type: 'string', format: 'uuid', description: 'Sent as `plant-store-backfill` with each of its deliveries' },
    subscriptionId: { type: 'string', format: 'uuid' },
    state: {
      type: 'string',
      enum: ['running', 'cancelling', 'completed', 'cancelled'],
      description:
        'running, then completed once every plant is queued and answered; cancelling (nothing more is sent; ' +
        'those in flight finish), then cancelled',
    },
    since: { ...dateTime, type: ['string', 'null'] },
    ratePerSecond: { type: 'integer' },
    total: {
      type: 'integer',
      description: 'Plants it would send when it was asked for (a plant stored since may add)',
    },
    queued: { type: 'integer', description: 'Deliveries written so far, in plant-id order' },
    sent: {
      type: 'integer',
      description: 'Of those, answered for good: succeeded, or failed after their last attempt (see their deliveries)',
    },
    pending: { type: 'integer', description: 'Queued, not yet answered for good (retries included)' },
    superseded: {
      type: 'integer',
      description: 'Not sent: the plant changed meanwhile, and its live delivery (after this one, never before) has it',
    },
    lastPlantId: {
      type: ['integer', 'null'],
      format: 'int64',
      description: 'The cursor: plants up to this id have been looked at',
    },
    createdBy: { type: 'string' },
    createdAt: dateTime,
    updatedAt: dateTime,
    finishedAt: { ...dateTime, type: ['string', 'null'] },
  }),
  AuditEvent: always({
    id: { type: 'string' },
    at: dateTime,
    actor: { type: 'string', description: "The admin token's name from ADMIN_TOKENS, or its fingerprint" },
    action: { type: 'string', examples: ['subscription.created', 'subscription.secret_rotated', 'delivery.retried'] },
    subscriptionId: { type: ['string', 'null'], format: 'uuid' },
    deliveryId: { type: ['string', 'null'], format: 'uuid' },
    details: {
      type: 'object',
      additionalProperties: true,
      description: 'What changed; never a secret or a token, and of a subscriber URL only its origin and path',
    },
  }),
  AuditPage: page('AuditEvent'),
  DeadLetter: {
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
  },
  DeadLetterWithValue: {
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
  },
  DeadLetterPage: page('DeadLetter'),
  DeliveryRetryFilter: {
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
  },
  Overview: {
    type: 'object',
    required: ['events', 'deliveries', 'deadLetters', 'lastHour'],
    properties: {
      events: always({
        stored: { type: 'integer', description: 'Events stored in the last 24 hours' },
        consumerLag: {
          type: ['integer', 'null'],
          description:
            "Events accepted (in plant.created) that the workers' group has not yet committed; null when the " +
            'broker did not answer within two seconds',
        },
      }),
      deliveries: always(
        { pending: { type: 'integer' }, succeeded: { type: 'integer' }, failed: { type: 'integer' } },
        { description: 'Deliveries created in the last 24 hours, by status' },
      ),
      deadLetters: { type: 'integer', description: 'Dead letters neither redriven nor discarded' },
      lastHour: {
        type: 'array',
        description: 'One entry per minute, oldest first',
        items: always({
          minute: dateTime,
          accepted: { type: 'integer', description: 'Events stored' },
          delivered: { type: 'integer' },
          failed: { type: 'integer', description: 'Deliveries that failed for good' },
        }),
      },
    },
  },
  DeadLetterIds: {
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
  },
  DeadLetterBulkResult: {
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
  },
  ...operationalEventSchemas(),
};
