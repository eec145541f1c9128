import type { Schema } from '@app/contracts';
import { AuditRow } from '@app/persistence';

/** An audit event as GET /audit returns it: the document's AuditEvent, through the generated types. */
export type AuditEventDto = Schema<'AuditEvent'>;

export const mapAuditEvent = (r: AuditRow): AuditEventDto => ({
  id: String(r.id),
  at: r.at.toISOString(),
  actor: r.actor,
  action: r.action,
  subscriptionId: r.subscription_id,
  deliveryId: r.delivery_id,
  details: r.details,
});
