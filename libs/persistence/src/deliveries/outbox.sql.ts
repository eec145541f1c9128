// The SQL rules every statement that touches the outbox shares, each written once: per-plant order, and the
// columns a delivery is sent with.
import { ClaimedDelivery } from '@app/delivery';
import { SecretBox, subscriptionContext } from '../secrets/secret-box';

/**
 * Per-plant order, per subscriber: a delivery waits while an earlier one for the same subscriber and plant is
 * pending. `seq` bounds "earlier" when the delivery is already stored; a delivery being written has no row yet,
 * so every pending one the statement can see is earlier.
 */
export const noEarlierPending = (subscriptionId: string, plantId: string, seq?: string) => `NOT EXISTS (
  SELECT 1 FROM deliveries e
  WHERE e.subscription_id = ${subscriptionId} AND e.plant_id = ${plantId} AND e.status = 'pending'${seq ? ` AND e.seq < ${seq}` : ''})`;

/** The delivery's side of a delivery about to be sent, from the outbox row (alias `o`). */
export const DELIVERY_SEND_COLUMNS = (o: string) =>
  [
    'id',
    'subscription_id',
    'event_id',
    'plant_id',
    'body',
    'event_time',
    'attempts',
    'hops',
    'origin_event_id',
    'traceparent',
  ]
    .map((c) => `${o}.${c}`)
    .join(', ');

/**
 * The subscription's side (alias `s`), as both the claim and the outbox write that leases return it: a
 * rotated-out secret still signs until its overlap ends.
 */
export const SUBSCRIPTION_SEND_COLUMNS = `s.url, s.token, s.secret,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret`;

/** A row of DELIVERY_SEND_COLUMNS and SUBSCRIPTION_SEND_COLUMNS. */
export interface SendRow {
  id: string;
  subscription_id: string;
  event_id: string;
  plant_id: number | string;
  body: string;
  event_time: Date | string;
  attempts: number;
  url: string;
  token: string | null;
  secret: string;
  previous_secret: string | null;
  hops: number | null;
  origin_event_id: string | null;
  traceparent: string | null;
}

/** The subscription's side of SUBSCRIPTION_SEND_COLUMNS. */
export type SubscriptionSendRow = Pick<SendRow, 'url' | 'token' | 'secret' | 'previous_secret'>;

/**
 * A subscription's credentials opened to send with (they are stored sealed, see secrets/): its token, and the
 * secrets that sign, current first.
 */
export function openSendCredentials(r: SubscriptionSendRow, subscriptionId: string, box: SecretBox) {
  const context = subscriptionContext(subscriptionId);
  return {
    token: box.openOptional(r.token, context),
    secrets: [r.secret, r.previous_secret].filter((x): x is string => Boolean(x)).map((x) => box.open(x, context)),
  };
}

/** The row as the dispatcher sends it: credentials opened. */
export const toClaimedDelivery = (r: SendRow, box: SecretBox): ClaimedDelivery => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  plantId: Number(r.plant_id),
  body: r.body,
  eventTime: new Date(r.event_time),
  attempts: r.attempts,
  url: r.url,
  ...openSendCredentials(r, r.subscription_id, box),
  hops: r.hops ?? 0,
  originEventId: r.origin_event_id ?? r.event_id,
  traceparent: r.traceparent,
});
