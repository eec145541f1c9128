import type { Schema } from '@app/contracts';
import { urlOriginAndPath } from '@app/delivery';
import { AuditRow } from '@app/persistence';

/** An audit event as GET /audit returns it: the document's AuditEvent, through the generated types. */
export type AuditEventDto = Schema<'AuditEvent'>;

/** A URL in the details shows only origin and path, also in events recorded before the trail kept only that. */
export const mapAuditEvent = (r: AuditRow): AuditEventDto => ({
  id: String(r.id),
  at: r.at.toISOString(),
  actor: r.actor,
  action: r.action,
  subscriptionId: r.subscription_id,
  deliveryId: r.delivery_id,
  details: typeof r.details.url === 'string' ? { ...r.details, url: urlOriginAndPath(r.details.url) } : r.details,
});
