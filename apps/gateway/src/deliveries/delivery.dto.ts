import type { Schema } from '@app/contracts';
import { sentHeaders } from '@app/delivery';
import { DeliveryDetailRow, DeliveryRow } from '@app/persistence';

// The shapes are the document's (libs/contracts/src/openapi/schemas.ts), through the generated types.
export type DeliveryDto = Schema<'Delivery'>;
export type DeliveryWithAttemptsDto = Schema<'DeliveryWithAttempts'>;

export const mapDelivery = (r: DeliveryRow): DeliveryDto => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  eventType: (r.event_type ?? 'plant.created') as DeliveryDto['eventType'],
  plantId: r.plant_id,
  status: r.status,
  attempts: r.attempts,
  // Only while pending.
  nextAttemptAt: r.status === 'pending' && r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** The last signed attempt's headers (an attempt the SSRF guard refused was never signed nor sent). */
function lastSentHeaders(r: DeliveryDetailRow): Record<string, string> | null {
  const last = [...r.attempt_log].reverse().find((a) => a.signature);
  if (!last) return null;
  const loop = { hops: r.hops, originEventId: r.origin_event_id ?? r.event_id, backfillId: r.backfill_id };
  return sentHeaders(r.event_id, last, loop, r.has_token, {
    headers: r.custom_headers,
    secretHeaderNames: r.secret_header_names,
  });
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
