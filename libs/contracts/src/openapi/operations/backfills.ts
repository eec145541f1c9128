// The backfills: the current state of every plant a subscription would receive, sent to it again.
import {
  adminReadOrPortal,
  adminWriteOrPortal,
  badParameter,
  forbidden,
  idParam,
  invalidBody,
  json,
  notFound,
  ok,
  portalChangeRate,
  problem,
  ref,
  subscriptionId,
  unauthorized,
} from './common';

const backfillId = idParam('backfillId', { type: 'string', format: 'uuid' }, 'Backfill id');

export const backfills = {
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
};

export const backfill = {
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
};

export const cancelBackfill = {
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
};
