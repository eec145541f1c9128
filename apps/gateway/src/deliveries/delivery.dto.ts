import { DeliveryAttempt, DeliveryStatus, sentHeaders } from '@app/delivery';
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

/** What the last attempt sent: the exact body, and its headers with the subscriber's token hidden. */
export interface SentRequestDto {
  body: string;
  /** Null until the first attempt. */
  headers: Record<string, string> | null;
}

export type DeliveryWithAttemptsDto = DeliveryDto & { request: SentRequestDto; attemptLog: DeliveryAttempt[] };

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

/** The last signed attempt's headers (an attempt the SSRF guard refused was never signed nor sent). */
function lastSentHeaders(r: DeliveryDetailRow): Record<string, string> | null {
  const last = [...r.attempt_log].reverse().find((a) => a.signature);
  if (!last) return null;
  return sentHeaders(r.event_id, last, { hops: r.hops, originEventId: r.origin_event_id ?? r.event_id }, r.has_token);
}

export const mapDeliveryWithAttempts = (r: DeliveryDetailRow): DeliveryWithAttemptsDto => ({
  ...mapDelivery(r),
  request: { body: r.body, headers: lastSentHeaders(r) },
  // PostgreSQL wrote the times as +00:00; the API speaks Z, like every other timestamp it returns.
  attemptLog: r.attempt_log.map((a) => ({
    ...a,
    attemptedAt: new Date(a.attemptedAt).toISOString(),
    signature: a.signature ?? null,
  })),
});
