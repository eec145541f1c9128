// The subscriptions to the New Plant webhook (and to the operational events): create, read, change, delete,
// rotate the secret, send a test.
import {
  adminRead,
  adminReadOrPortal,
  adminWrite,
  adminWriteOrPortal,
  badParameter,
  forbidden,
  invalidBody,
  json,
  notFound,
  ok,
  PORTAL_CHANGE_RATE,
  portalChangeRate,
  problem,
  ref,
  subscriptionId,
  tooMany,
  unauthorized,
} from './common';

export const subscriptions = {
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
};

export const subscription = {
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
};

export const rotateSecret = {
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
};

export const subscriptionTest = {
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
};
