import { DeliveryAttempt, DeliveryStatus } from '@app/delivery';
import { DeliveryDetailRow, DeliveryRow } from '@app/persistence';

/** A delivery as the admin API lists it (Delivery in /openapi.json). */
export interface DeliveryDto {
  id: string;
  subscriptionId: string;
  eventId: string;
  plantId: number;
  status: DeliveryStatus;
  attempts: number;
  /** Only while pending. */
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type DeliveryWithAttemptsDto = DeliveryDto & { attemptLog: DeliveryAttempt[] };

export const mapDelivery = (r: DeliveryRow): DeliveryDto => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  plantId: r.plant_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.status === 'pending' && r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export const mapDeliveryWithAttempts = (r: DeliveryDetailRow): DeliveryWithAttemptsDto => ({
  ...mapDelivery(r),
  // PostgreSQL wrote the times as +00:00; the API speaks Z, like every other timestamp it returns.
  attemptLog: r.attempt_log.map((a) => ({ ...a, attemptedAt: new Date(a.attemptedAt).toISOString() })),
});
