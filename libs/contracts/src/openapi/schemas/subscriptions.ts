// Schemas of the subscriptions to the New Plant webhook (and to the operational events), and of a test send.
import { OPERATIONAL_EVENT_TYPES } from '../../operational-events';
import { RESERVED_HEADER_LIST } from '../../reserved-headers';
import { always, dateTime, ref } from './common';
import { DESTINATION_SCHEMES } from './destinations';

// Kept, and forwarded on every delivery: bounded. A token goes out as a header, so only what a header carries.
const subscriberUrl = {
  type: 'string',
  pattern: '^[A-Za-z][A-Za-z0-9+.-]*://',
  maxLength: 2048,
  description:
    `Where its New Plants go; the scheme selects the kind (docs/destinations.md): ${DESTINATION_SCHEMES}. ` +
    'http(s): the receiver (user-info: Basic auth, sealed; or send a `token`). kafka://host:port[,host:port]/topic; ' +
    'amqp(s)://user:pass@host:port/vhost?exchange=…&routingKey=…; nats://host:port/subject (a JetStream stream ' +
    'must capture it); mqtt(s)://host:port/topic; redis(s)://host:port/stream-key[?db=N]; ' +
    'sqs://KEY_ID:SECRET@sqs.<region>.amazonaws.com/account-id/queue-name[?region=…] (sqs+http:// for a plain-HTTP ' +
    'SQS-compatible server, ?region= required there). Any other scheme: 422',
};
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

export const SubscriptionCreate = {
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
    destination: ref('SubscriptionDestination'),
    headers: headerMap('Headers sent with each delivery, name → value; shown in responses.'),
    secretHeaders: headerMap(
      'Headers sent with each delivery whose values are secret (an API key): sealed at rest and never shown ' +
        'again (responses list their names in `secretHeaderNames`; the headers an attempt sent show a ' +
        'placeholder; a receiver echoing one has it redacted).',
    ),
  },
};

export const SubscriptionUpdate = {
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
    destination: ref('SubscriptionDestination'),
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
};

export const SubscriptionFilter = {
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
};

export const Subscription = always({
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
  destination: ref('SubscriptionDestinationShown'),
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
});

export const SubscriptionCircuit = always({
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
});

export const SubscriptionWithSecret = {
  allOf: [
    ref('Subscription'),
    {
      type: 'object',
      properties: {
        secret: { type: 'string', description: 'symmetric only: the `whsec_` secret, shown in this response only' },
      },
    },
  ],
};

export const SubscriptionTest = {
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
};

export const SubscriptionTestResult = {
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
};
