import type { Schema } from '@app/contracts';
import { PortalLinkRow } from '@app/persistence';

// The shapes are the document's (libs/contracts/src/openapi/schemas.ts), through the generated types.
export type PortalLinkDto = Schema<'PortalLink'>;
export type PortalLinkWithTokenDto = Schema<'PortalLinkWithToken'>;
export type PortalSessionDto = Schema<'PortalSession'>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const mapPortalLink = (r: PortalLinkRow, now = new Date()): PortalLinkDto => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  description: r.description,
  state: r.revoked_at ? 'revoked' : r.expires_at <= now ? 'expired' : 'active',
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
  revokedAt: iso(r.revoked_at),
  revokedBy: r.revoked_by,
  lastUsedAt: iso(r.last_used_at),
});

/**
 * The console's portal page, with the token in the fragment: browsers never send a fragment to a server (nor in
 * a Referer), so the token stays out of access logs, proxies and other sites. The page moves it into the tab's
 * sessionStorage and takes it out of the address bar at once.
 */
export const portalUrl = (origin: string, token: string) => `${origin}/console/portal#token=${token}`;
