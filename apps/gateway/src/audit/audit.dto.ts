import { AuditRow } from '@app/persistence';

/** An audit event as GET /audit returns it (AuditEvent in /openapi.json). */
export interface AuditEventDto {
  id: string;
  at: string;
  actor: string;
  action: string;
  subscriptionId: string | null;
  deliveryId: string | null;
  details: Record<string, unknown>;
}

export const mapAuditEvent = (r: AuditRow): AuditEventDto => ({
  id: String(r.id),
  at: r.at.toISOString(),
  actor: r.actor,
  action: r.action,
  subscriptionId: r.subscription_id,
  deliveryId: r.delivery_id,
  details: r.details,
});
