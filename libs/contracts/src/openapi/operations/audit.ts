// The audit log: the changes made through the admin API.
import { adminRead, badParameter, cursorParams, forbidden, instant, ok, ref, unauthorized } from './common';

export const audit = {
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
};
