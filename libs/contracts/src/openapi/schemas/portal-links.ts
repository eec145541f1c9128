// Schemas of the portal links: a subscriber's own credential for one subscription.
import { PORTAL_LINK_LIFETIME } from '../../portal-link-lifetime';
import { PORTAL_TOKEN_PATTERN } from '../../portal-token';
import { always, dateTime, ref } from './common';

export const PortalLinkCreate = {
  type: 'object',
  additionalProperties: false,
  properties: {
    lifetimeSeconds: {
      type: 'integer',
      minimum: PORTAL_LINK_LIFETIME.min,
      maximum: PORTAL_LINK_LIFETIME.max,
      default: PORTAL_LINK_LIFETIME.default,
      description: 'How long the link opens the portal: 1 minute to 30 days; 7 days when absent',
    },
    description: { type: 'string', maxLength: 500, description: 'Who it is for, shown in the list' },
  },
};

export const PortalLink = always({
  id: { type: 'string', format: 'uuid' },
  subscriptionId: { type: 'string', format: 'uuid' },
  description: { type: ['string', 'null'] },
  state: {
    type: 'string',
    enum: ['active', 'expired', 'revoked'],
    description: 'active until it expires or is revoked; a revoked or expired link is refused with 401',
  },
  createdBy: { type: 'string', description: "The admin token's name that made it" },
  createdAt: dateTime,
  expiresAt: dateTime,
  revokedAt: { ...dateTime, type: ['string', 'null'] },
  revokedBy: { type: ['string', 'null'] },
  lastUsedAt: { ...dateTime, type: ['string', 'null'], description: 'Its last use, to the minute' },
});

export const PortalLinkWithToken = {
  allOf: [
    ref('PortalLink'),
    {
      type: 'object',
      required: ['token', 'url'],
      properties: {
        token: {
          type: 'string',
          pattern: PORTAL_TOKEN_PATTERN,
          description: 'The bearer token (`portalAuth`), shown in this response only; only its SHA-256 is kept',
        },
        url: {
          type: 'string',
          format: 'uri',
          description:
            "The console's portal page with the token in its fragment (`/console/portal#token=…`): a fragment " +
            'is never sent to a server, so the token stays out of access logs and Referer headers',
        },
      },
    },
  ],
};

export const PortalSession = always({
  subscriptionId: { type: 'string', format: 'uuid' },
  linkId: { type: 'string', format: 'uuid' },
  expiresAt: dateTime,
});
