// The deliveries: list and inspect them, retry the failed ones, replay a subscription's since a time.
import {
  adminReadOrPortal,
  adminWriteOrPortal,
  badParameter,
  cursorParams,
  forbidden,
  idParam,
  instant,
  json,
  notFound,
  ok,
  plantIdSchema,
  PORTAL_CHANGE_RATE,
  portalChangeRate,
  problem,
  ref,
  subscriptionId,
  tooMany,
  unauthorized,
} from './common';

const deliveryId = idParam('id', { type: 'string', format: 'uuid' }, 'Delivery id');

export const recover = {
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
};

export const deliveries = {
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
};

export const retryDeliveries = {
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
};

export const delivery = {
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
};

export const retryDelivery = {
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
};
