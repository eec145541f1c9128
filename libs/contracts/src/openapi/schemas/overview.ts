// The overview's schema: what flows, at a glance.
import { always, dateTime } from './common';

export const Overview = {
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
};
