// Schemas of the audit log: the changes made through the admin API.
import { always, dateTime, page } from './common';

export const AuditEvent = always({
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
});

export const AuditPage = page('AuditEvent');
