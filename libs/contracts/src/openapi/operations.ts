// The operations Plant Store adds under `paths`: the read API (webhook tokens) and the admin API
// (ADMIN_TOKENS). Schemas they use live in ./schemas.ts.
import { MAX_PLANT_ID } from '../plant-id';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
const ok = (description: string, schema: unknown) => ({ description, ...json(schema) });
const idParam = (name: string, schema: unknown, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
const cursorParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
  { name: 'cursor', in: 'query', description: 'The `nextCursor` of the previous page', schema: { type: 'string' } },
];
// OpenAPI 3.1 lets a bearer scheme list the roles an operation needs: `read` or `write` (ADMIN_TOKENS scopes).
const adminRead = [{ adminAuth: ['read'] }];
const adminWrite = [{ adminAuth: ['write'] }];
// The read API: a webhook token (the document's global bearerAuth) or any admin token.
const storeRead = [{ bearerAuth: [] }, { adminAuth: [] }];
// Operations a portal link's token may also call, for its own subscription only (see the portalAuth scheme).
// The gateway reads this list from here: an operation without `portalAuth` answers a portal token 403.
const adminReadOrPortal = [...adminRead, { portalAuth: [] }];
const adminWriteOrPortal = [...adminWrite, { portalAuth: [] }];
const unauthorized = problem(
  'Missing or wrong bearer token, or a portal link that expired, was revoked, or whose subscription was deleted or ' +
    'is operational (`detail` says which)',
);
const forbidden = problem(
  'An admin token without the scope this operation needs (named in `detail`), or a portal link token used ' +
    'outside its own subscription',
);
const notFound = problem('No such resource');
// Past a share (issue 36): 429 with Retry-After, the problem's `reason` naming the share.
const tooMany = (description: string) => ({
  ...problem(description),
  headers: {
    'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  },
});
// Every operation a portal link may call that is not a read (the gateway charges them: portal-change-rate.ts).
const PORTAL_CHANGE_RATE =
  "portal link's token past its rate of changes (PORTAL_LINK_CHANGES_BURST at once, then " +
  'PORTAL_LINK_CHANGES_PER_MINUTE, per link and gateway; `reason`: `portal-link-change-rate`): nothing was done';
const portalChangeRate = tooMany(`A ${PORTAL_CHANGE_RATE}. Admin tokens are not limited.`);
const plantIdSchema = {
  type: 'integer',
  format: 'int64',
  minimum: -MAX_PLANT_ID,
  maximum: MAX_PLANT_ID,
  description:
    'Any int64 the New Plant webhook accepts, within ±(2^53 - 1): a JSON number beyond that cannot be carried ' +
    'exactly, so the webhook refuses such ids with 422 rather than store a rounded one',
};
const badParameter = problem(
  'A path or query parameter does not match its schema (each named in `errors`): a date that is no real instant ' +
    '(a leap second), an integer beyond ±(2^53 - 1), a cursor this API did not issue',
);
/** RFC 3339, and a real instant: a leap second (23:59:60) is refused with 422; fractions beyond ms are cut. */
const instant = (description: string) => ({
  description,
  schema: {
    type: 'string',
    format: 'date-time',
    description: 'RFC 3339; a real instant (no leap second, 23:59:60); fractions beyond milliseconds are cut',
  },
});
const subscriptionId = idParam('id', { type: 'string', format: 'uuid' }, 'Subscription id');
const backfillId = idParam('backfillId', { type: 'string', format: 'uuid' }, 'Backfill id');
const deliveryId = idParam('id', { type: 'string', format: 'uuid' }, 'Delivery id');
const deadLetterId = idParam('id', { type: 'string', pattern: '^[1-9][0-9]{0,17}$' }, 'Dead-letter id');
const idsBody = { required: true, ...json(ref('DeadLetterIds')) };
const invalidBody = problem(
  'The body does not match its schema, or would not be stored as sent: a NUL or unpaired surrogate in any string ' +
    'or property name, a number a double cannot carry exactly (each field named in `errors`)',
);

export const operations: Record<string, unknown> = {
  '/plants': {
    get: {
      operationId: 'listPlants',
      summary: 'List stored plants, newest first',
      tags: ['Plants'],
      security: storeRead,
      parameters: cursorParams,
      responses: { '200': ok('A page of plants', ref('PlantPage')), '401': unauthorized, '422': badParameter },
    },
  },
  '/plants/{id}': {
    get: {
      operationId: 'getPlant',
      summary: 'Get a stored plant',
      tags: ['Plants'],
      security: storeRead,
      parameters: [idParam('id', plantIdSchema, 'Plant id')],
      responses: {
        '200': ok('The plant', ref('StoredPlant')),
        '401': unauthorized,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/subscriptions': {
    get: {
      operationId: 'listSubscriptions',
      summary: 'List subscriptions to the New Plant webhook',
      tags: ['Subscriptions'],
      security: adminRead,
      responses: {
        '200': ok('Subscriptions', { type: 'array', items: ref('Subscription') }),
        '401': unauthorized,
        '403': forbidden,
      },
    },
    post: {
      operationId: 'createSubscription',
      summary: 'Subscribe a URL to the New Plant webhook',
      description: 'The signing secret is returned once, in this response only.',
      tags: ['Subscriptions'],
      security: adminWrite,
      requestBody: { required: true, ...json(ref('SubscriptionCreate')) },
      responses: {
        '201': ok('Created; `secret` is shown only now', ref('SubscriptionWithSecret')),
        '401': unauthorized,
        '403': forbidden,
        '422': problem('Invalid body, or a URL that resolves to a private address'),
      },
    },
  },
  '/subscriptions/{id}': {
    get: {
      operationId: 'getSubscription',
      summary: 'Get a subscription (with its public key when it signs asymmetrically)',
      tags: ['Subscriptions'],
      security: adminReadOrPortal,
      parameters: [subscriptionId],
      responses: {
        '200': ok('The subscription', ref('Subscription')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
    patch: {
      operationId: 'updateSubscription',
      summary: 'Enable or disable, or change the url or token',
      description:
        'A portal link may change `url`, `token`, `description` and `enabled`; `filter` (which plants the ' +
        "subscriber is sent) stays the operator's: a portal token that sends it gets 403 naming the field. A " +
        'subscription an admin disabled stays disabled until an admin enables it: a portal token that enables it ' +
        "gets 409 saying so. A portal token's change of `url` removes the secret headers and the token (they were " +
        'given for the URL the operator set), but those the same change sets. Headers and a token are written for ' +
        'the URL the change read: 409 if it changed meanwhile.',
      tags: ['Subscriptions'],
      security: adminWriteOrPortal,
      parameters: [subscriptionId],
      requestBody: { required: true, ...json(ref('SubscriptionUpdate')) },
      responses: {
        '200': ok('Updated', ref('Subscription')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem(
          'A portal token enabling a subscription an admin disabled, or the subscription changed while this change ' +
            'was made (`detail` says which, and what to do)',
        ),
        '422': problem('Invalid body or id'),
        '429': portalChangeRate,
      },
    },
    delete: {
      operationId: 'deleteSubscription',
      summary: 'Delete a subscription (its audit events stay)',
      tags: ['Subscriptions'],
      security: adminWrite,
      parameters: [subscriptionId],
      responses: {
        '204': { description: 'Deleted' },
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/subscriptions/{id}/rotate-secret': {
    post: {
      operationId: 'rotateSubscriptionSecret',
      summary: 'Replace the signing secret; the old one keeps signing for 24 h',
      tags: ['Subscriptions'],
      security: adminWriteOrPortal,
      parameters: [subscriptionId],
      responses: {
        '200': ok('The new secret, shown once', ref('SubscriptionWithSecret')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
        '429': portalChangeRate,
      },
    },
  },
  '/subscriptions/{id}/test': {
    post: {
      operationId: 'testSubscription',
      summary: 'Send a signed test New Plant to the subscription now, and answer what came back',
      description:
        "Signed with the subscription's secret and sent with its token, through the same SSRF guard and timeout as " +
        'a delivery, with a `webhook-id` of its own (`msg_test_…`). Nothing is stored or retried; the test is ' +
        'audited. A receiver that fails still answers 200 here: see `response` and `succeeded`.',
      tags: ['Subscriptions'],
      security: adminWriteOrPortal,
      parameters: [subscriptionId],
      requestBody: { required: false, ...json(ref('SubscriptionTest')) },
      responses: {
        '200': ok('What was sent and what came back', ref('SubscriptionTestResult')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': invalidBody,
        '429': tooMany(
          'TEST_SENDS_PER_SUBSCRIPTION test sends of this subscription (2 by default) already wait for its receiver ' +
            '(`reason`: `test-send-share`; Retry-After: when the oldest is answered at the latest), or a ' +
            PORTAL_CHANGE_RATE,
        ),
        '503': problem('16 test sends already wait for their receivers on this gateway (Retry-After says when)'),
      },
    },
  },
  '/subscriptions/{id}/portal-links': {
    get: {
      operationId: 'listPortalLinks',
      summary: "List a subscription's portal links (never their tokens), newest first",
      tags: ['Portal links'],
      security: adminRead,
      parameters: [subscriptionId],
      responses: {
        '200': ok('Its portal links, revoked and expired ones included', {
          type: 'array',
          items: ref('PortalLink'),
        }),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
    post: {
      operationId: 'createPortalLink',
      summary: 'Make a portal link: the subscriber sees and manages this subscription alone, until it expires',
      description:
        'The token (and the `url` that carries it, in its fragment) is returned once, in this response only: only ' +
        'its SHA-256 is stored. It is a bearer credential for the operations whose `security` lists `portalAuth`, ' +
        'on this subscription only. Audited (`portal_link.created`).',
      tags: ['Portal links'],
      security: adminWrite,
      parameters: [subscriptionId],
      requestBody: { required: false, ...json(ref('PortalLinkCreate')) },
      responses: {
        '201': ok('Created; `token` and `url` are shown only now', ref('PortalLinkWithToken')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem(
          "An operational subscription (Plant Store's own events, the operator's): it has no portal link; manage it " +
            'with an admin token',
        ),
        '422': invalidBody,
      },
    },
  },
  '/subscriptions/{id}/portal-links/{linkId}': {
    delete: {
      operationId: 'revokePortalLink',
      summary: 'Revoke a portal link: its token is refused (401) from now on',
      description: 'The link stays listed, revoked. Revoking twice keeps the first revocation. Audited.',
      tags: ['Portal links'],
      security: adminWrite,
      parameters: [subscriptionId, idParam('linkId', { type: 'string', format: 'uuid' }, 'Portal link id')],
      responses: {
        '200': ok('Revoked', ref('PortalLink')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/portal/session': {
    get: {
      operationId: 'getPortalSession',
      summary: 'Which subscription a portal link opens, and until when',
      description: "A portal link's token only: the console's portal page asks it first.",
      tags: ['Portal links'],
      security: [{ portalAuth: [] }],
      responses: {
        '200': ok('The portal session', ref('PortalSession')),
        '401': unauthorized,
      },
    },
  },
  '/subscriptions/{id}/recover': {
    post: {
      operationId: 'recoverSubscription',
      summary: 'Replay the failed deliveries since a time, or every delivery since a time',
      description:
        '`status=failed` (the default): every failed delivery created at or after `since` goes back to pending, ' +
        'one more attempt each, in one step. `status=all`: every New Plant delivery whose event is at or after ' +
        '`since` and that is not pending (succeeded or failed) is sent again, with its `webhook-id` (the same ' +
        "message) and a new attempt in its log; a plant's versions go oldest first, and one is left unsent " +
        '(back to what it was) when a newer version of its plant reached the subscriber meanwhile. Bounded: at ' +
        'most 5,000 re-queued and 50,000 deliveries looked at per call; while `complete` is false, call again ' +
        'with `cursor` to go on. Due after `DATABASE_STATEMENT_TIMEOUT_MS`. Audited (`subscription.recovered`).',
      tags: ['Deliveries'],
      security: adminWriteOrPortal,
      parameters: [
        subscriptionId,
        {
          name: 'since',
          in: 'query',
          required: true,
          ...instant('failed: created at or after; all: the event at or after'),
        },
        {
          name: 'status',
          in: 'query',
          description: 'failed: the failed deliveries only; all: every delivery, those that succeeded too',
          schema: { type: 'string', enum: ['failed', 'all'], default: 'failed' },
        },
        {
          name: 'cursor',
          in: 'query',
          description: 'status=all: the `cursor` of the previous answer, to go on where it stopped',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '202': ok('Re-queued', ref('Recovery')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem(
          'Another replay of this subscription is running, from any token or gateway: one at a time ' +
            '(`reason`: `replay-in-progress`; Retry-After: seconds to wait, 5 at most). Nothing was re-queued.',
        ),
        '422': badParameter,
        '429': tooMany(
          `A ${PORTAL_CHANGE_RATE}; or the subscription's portal links started PORTAL_LINK_REPLAYS_PER_DAY replays ` +
            'in the last 24 hours (`reason`: `portal-link-replay-budget`; Retry-After: until the oldest is a day ' +
            'old), or one within PORTAL_LINK_REPLAY_INTERVAL (`reason`: `portal-link-replay-rate`): nothing was ' +
            're-queued. Admin tokens are not limited.',
        ),
      },
    },
  },
  '/subscriptions/{id}/backfills': {
    post: {
      operationId: 'createBackfill',
      summary: 'Send the subscriber the current state of every plant it would receive (or those changed since)',
      description:
        'New Plant webhooks in plant-id order, its filter applied, each with `plant-store-backfill: <backfill id>` ' +
        'and a `webhook-id` of its own; paced at `ratePerSecond`, resumed after a worker crash, cancellable. A ' +
        "plant's backfilled version never overtakes, nor follows, a newer live delivery of it to this subscriber. " +
        'One backfill per subscription at a time (409 while one is running). Open to its portal link.',
      tags: ['Subscriptions'],
      security: adminWriteOrPortal,
      parameters: [subscriptionId],
      requestBody: { required: false, ...json(ref('BackfillCreate')) },
      responses: {
        '201': ok('Started', ref('Backfill')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem('A backfill of this subscription is running: wait for it, or cancel it'),
        '422': invalidBody,
        '429': portalChangeRate,
      },
    },
    get: {
      operationId: 'listBackfills',
      summary: "The subscription's backfills, newest first (the last 100), with their progress",
      tags: ['Subscriptions'],
      security: adminReadOrPortal,
      parameters: [subscriptionId],
      responses: {
        '200': ok('Its backfills', { type: 'array', items: ref('Backfill') }),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/subscriptions/{id}/backfills/{backfillId}': {
    get: {
      operationId: 'getBackfill',
      summary: 'A backfill and its progress',
      tags: ['Subscriptions'],
      security: adminReadOrPortal,
      parameters: [subscriptionId, backfillId],
      responses: {
        '200': ok('The backfill', ref('Backfill')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/subscriptions/{id}/backfills/{backfillId}/cancel': {
    post: {
      operationId: 'cancelBackfill',
      summary: 'Stop a running backfill: nothing more of it is sent (deliveries in flight finish)',
      tags: ['Subscriptions'],
      security: adminWriteOrPortal,
      parameters: [subscriptionId, backfillId],
      responses: {
        '200': ok('Cancelling', ref('Backfill')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem('It is not running (completed or cancelled already)'),
        '422': badParameter,
        '429': portalChangeRate,
      },
    },
  },
  '/deliveries': {
    get: {
      operationId: 'listDeliveries',
      summary: 'List deliveries, newest first',
      description:
        "With a portal link's token, only its subscription's: `subscriptionId` defaults to it, another is 403.",
      tags: ['Deliveries'],
      security: adminReadOrPortal,
      parameters: [
        { name: 'subscriptionId', in: 'query', schema: { type: 'string', format: 'uuid' } },
        { name: 'status', in: 'query', schema: { type: 'string', enum: ['pending', 'succeeded', 'failed'] } },
        { name: 'plantId', in: 'query', schema: plantIdSchema },
        { name: 'since', in: 'query', ...instant('Created at or after') },
        { name: 'until', in: 'query', ...instant('Created before') },
        ...cursorParams,
      ],
      responses: {
        '200': ok('A page of deliveries', ref('DeliveryPage')),
        '401': unauthorized,
        '403': forbidden,
        '422': badParameter,
      },
    },
  },
  '/deliveries/retry': {
    post: {
      operationId: 'retryDeliveries',
      summary: 'Send every failed delivery that matches again now',
      description:
        'Failed deliveries matching all the conditions given (at least one) go back to pending, except those of ' +
        'deleted subscriptions. Each is audited.',
      tags: ['Deliveries'],
      security: adminWriteOrPortal,
      requestBody: { required: true, ...json(ref('DeliveryRetryFilter')) },
      responses: {
        '202': ok('Re-queued', { type: 'object', properties: { requeued: { type: 'integer' } } }),
        '401': unauthorized,
        '403': forbidden,
        '422': problem('The body does not match its schema (each field named in `errors`)'),
        '429': portalChangeRate,
      },
    },
  },
  '/overview': {
    get: {
      operationId: 'getOverview',
      summary: 'What flows: deliveries by status, dead letters, and the last hour per minute',
      tags: ['Overview'],
      security: adminRead,
      responses: { '200': ok('The overview', ref('Overview')), '401': unauthorized, '403': forbidden },
    },
  },
  '/deliveries/{id}': {
    get: {
      operationId: 'getDelivery',
      summary: 'Get a delivery with every attempt',
      tags: ['Deliveries'],
      security: adminReadOrPortal,
      parameters: [deliveryId],
      responses: {
        '200': ok('The delivery with its attempts', ref('DeliveryWithAttempts')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/deliveries/{id}/retry': {
    post: {
      operationId: 'retryDelivery',
      summary: 'Send a failed delivery again now',
      tags: ['Deliveries'],
      security: adminWriteOrPortal,
      parameters: [deliveryId],
      responses: {
        '202': ok('Queued', ref('Delivery')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem('Not failed'),
        '422': badParameter,
        '429': portalChangeRate,
      },
    },
  },
  '/dead-letters': {
    get: {
      operationId: 'listDeadLetters',
      summary: 'List dead letters, newest first',
      description:
        'Records of plant.created.dlq: events the worker could not store, with the reason and where they came from. ' +
        'The worker copies each one into the database, so this survives restarts and works with any number of replicas.',
      tags: ['Dead letters'],
      security: adminRead,
      parameters: [
        {
          name: 'status',
          in: 'query',
          schema: { type: 'string', enum: ['dead', 'redriving', 'redriven', 'discarded'] },
        },
        ...cursorParams,
      ],
      responses: {
        '200': ok('A page of dead letters', ref('DeadLetterPage')),
        '401': unauthorized,
        '403': forbidden,
        '422': badParameter,
      },
    },
  },
  '/dead-letters/{id}': {
    get: {
      operationId: 'getDeadLetter',
      summary: 'Get a dead letter with its original value and headers',
      tags: ['Dead letters'],
      security: adminRead,
      parameters: [deadLetterId],
      responses: {
        '200': ok('The dead letter', ref('DeadLetterWithValue')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '422': badParameter,
      },
    },
  },
  '/dead-letters/{id}/redrive': {
    post: {
      operationId: 'redriveDeadLetter',
      summary: 'Republish a dead letter to plant.created',
      description:
        'The original key, value and headers go back to plant.created, with `x-redriven-from` naming the dead ' +
        'letter. Answered once Kafka has it. A redrive sent twice publishes once (the second gets 409); the worker ' +
        'applies an event id once in any case.',
      tags: ['Dead letters'],
      security: adminWrite,
      parameters: [deadLetterId],
      responses: {
        '202': ok('Republished', ref('DeadLetter')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem('Not dead: already redriven, being redriven, or discarded'),
        '422': badParameter,
        '503': problem('Kafka did not take it in time: it is still dead; retry'),
      },
    },
  },
  '/dead-letters/{id}/discard': {
    post: {
      operationId: 'discardDeadLetter',
      summary: 'Mark a dead letter discarded (it stays listed, with who discarded it)',
      tags: ['Dead letters'],
      security: adminWrite,
      parameters: [deadLetterId],
      responses: {
        '200': ok('Discarded', ref('DeadLetter')),
        '401': unauthorized,
        '403': forbidden,
        '404': notFound,
        '409': problem('Not dead: already redriven or discarded'),
        '422': badParameter,
      },
    },
  },
  '/dead-letters/redrive': {
    post: {
      operationId: 'redriveDeadLetters',
      summary: 'Republish many dead letters to plant.created',
      tags: ['Dead letters'],
      security: adminWrite,
      requestBody: idsBody,
      responses: {
        '200': ok('What was redriven and what was left', ref('DeadLetterBulkResult')),
        '401': unauthorized,
        '403': forbidden,
        '422': invalidBody,
        '503': problem('Kafka did not take them in time: they are still dead; retry'),
      },
    },
  },
  '/dead-letters/discard': {
    post: {
      operationId: 'discardDeadLetters',
      summary: 'Mark many dead letters discarded',
      tags: ['Dead letters'],
      security: adminWrite,
      requestBody: idsBody,
      responses: {
        '200': ok('What was discarded and what was left', ref('DeadLetterBulkResult')),
        '401': unauthorized,
        '403': forbidden,
        '422': invalidBody,
      },
    },
  },
  '/audit': {
    get: {
      operationId: 'listAudit',
      summary: 'Changes made through the admin API, newest first',
      description: 'Who (the token name, never the token), when, what (never a secret). Kept after a delete.',
      tags: ['Audit'],
      security: adminRead,
      parameters: [
        { name: 'subscriptionId', in: 'query', schema: { type: 'string', format: 'uuid' } },
        { name: 'since', in: 'query', ...instant('At or after') },
        { name: 'until', in: 'query', ...instant('Before') },
        ...cursorParams,
      ],
      responses: {
        '200': ok('A page of audit events', ref('AuditPage')),
        '401': unauthorized,
        '403': forbidden,
        '422': badParameter,
      },
    },
  },
};
