// Schemas of the backfills: the current state of every plant, sent again to one subscriber.
import { always, dateTime } from './common';

export const BackfillCreate = {
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
};

export const Backfill = always({
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
});
