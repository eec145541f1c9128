// The overview: what flows, at a glance.
import { adminRead, forbidden, ok, ref, unauthorized } from './common';

export const overview = {
  get: {
    operationId: 'getOverview',
    summary: 'What flows: deliveries by status, dead letters, and the last hour per minute',
    tags: ['Overview'],
    security: adminRead,
    responses: { '200': ok('The overview', ref('Overview')), '401': unauthorized, '403': forbidden },
  },
};
