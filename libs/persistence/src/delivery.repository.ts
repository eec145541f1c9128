import { Pool } from 'pg';
import { Page, toPage } from './cursor';
import { isUuid } from './subscription.repository';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface Delivery {
  id: string;
  subscriptionId: string;
  eventId: string;
  plantId: number;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryAttempt {
  attemptedAt: string;
  status: number | null;
  latencyMs: number;
  error: string | null;
  responseBody: string | null;
}

/** A claimed delivery with everything needed to send it. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  eventId: string;
  plantId: number;
  body: string;
  eventTime: Date;
  attempts: number;
  url: string;
  token: string | null;
  secrets: string[];
  /** Sent as LoopHeaders: this delivery is hop `hops + 1` of the chain started by `originEventId`. */
  hops: number;
  originEventId: string;
}

/** Columns of a claimed delivery as the claim (and the outbox write that leases as it goes) return them. */
export interface ClaimedRow {
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
}

export const toClaimedDelivery = (r: ClaimedRow): ClaimedDelivery => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  plantId: Number(r.plant_id),
  body: r.body,
  eventTime: new Date(r.event_time),
  attempts: r.attempts,
  url: r.url,
  token: r.token,
  secrets: [r.secret, r.previous_secret].filter((x): x is string => Boolean(x)),
  hops: r.hops ?? 0,
  originEventId: r.origin_event_id ?? r.event_id,
});

export interface ClaimResult {
  claimed: ClaimedDelivery[];
  /** Due deliveries this claim left (waiting behind an earlier one for their plant, or beyond the limit). */
  more: boolean;
}

export type AttemptOutcome =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'failed'; disableSubscription?: string };

export interface AttemptRecord {
  deliveryId: string;
  attempt: DeliveryAttempt;
  outcome: AttemptOutcome;
}

/**
 * The subscription's side of a delivery about to be sent (alias `s`), as both the claim and the outbox write
 * that leases return it: a rotated-out secret still signs until its overlap ends.
 */
export const SUBSCRIPTION_SEND_COLUMNS = `s.url, s.token, s.secret,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret`;

const RECORD_ATTEMPTS = `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[])
    AS t(delivery_id, attempted_at, status, latency_ms, error, response_body, next_status, delay_ms, disable_reason)
), updated AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, status = r.next_status, leased_until = NULL, updated_at = now(),
         next_attempt_at = now() + r.delay_ms * interval '1 millisecond',
         attempt_log = d.attempt_log || jsonb_build_array(jsonb_build_object(
           'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
           'error', r.error, 'responseBody', r.response_body))
  FROM r WHERE d.id = r.delivery_id -- a delivery deleted meanwhile (subscription gone) is skipped
  RETURNING d.subscription_id, r.disable_reason
)
UPDATE subscriptions s SET enabled = false, disabled_reason = u.disable_reason, updated_at = now()
FROM updated u WHERE s.id = u.subscription_id AND u.disable_reason IS NOT NULL`;

interface DeliveryRow {
  id: string;
  seq: number;
  subscription_id: string;
  event_id: string;
  plant_id: number;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What a listing returns: not the body, nor the attempt log. */
const DELIVERY_COLUMNS = 'id, seq, subscription_id, event_id, plant_id, status, attempts, next_attempt_at, created_at, updated_at';

const toDelivery = (r: DeliveryRow): Delivery => ({
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

// Claims due deliveries for this dispatcher with a lease (not a held lock), so a crashed worker's claims
// come back when the lease runs out. SKIP LOCKED lets replicas claim side by side. A delivery waits while
// an earlier one for the same subscriber and plant is still pending: per-plant order, per subscriber.
// The oldest due rows come from the partial index first and only they are checked for an earlier pending
// delivery, so a claim costs the same with a backlog of a million rows as with ten. (If more than 8x the
// batch of the oldest due rows were all waiting behind earlier ones, this claim takes fewer; the rest go
// out on later claims, as the earlier ones finish.)
const CLAIM = `
WITH candidates AS MATERIALIZED (
  SELECT d.id, d.subscription_id, d.plant_id, d.seq, d.next_attempt_at FROM deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    AND (d.leased_until IS NULL OR d.leased_until < now())
    AND NOT (d.subscription_id = ANY($2::uuid[]))
  ORDER BY d.next_attempt_at
  LIMIT $1 * 8
), due AS (
  -- No ORDER BY: the candidates come oldest first and are checked one by one until the limit, not all of them
  -- then sorted (claim order is a preference; per-plant order is kept by the NOT EXISTS, not by this order).
  SELECT d.id FROM candidates c
  JOIN deliveries d ON d.id = c.id
  WHERE EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = c.subscription_id AND s.enabled)
    AND NOT EXISTS (
      SELECT 1 FROM deliveries e
      WHERE e.subscription_id = c.subscription_id AND e.plant_id = c.plant_id AND e.status = 'pending' AND e.seq < c.seq)
  LIMIT $1
  FOR UPDATE OF d SKIP LOCKED
), claimed AS (
  UPDATE deliveries d SET leased_until = now() + $3 * interval '1 millisecond'
  FROM due, subscriptions s
  WHERE d.id = due.id AND s.id = d.subscription_id
  RETURNING d.id, d.subscription_id, d.event_id, d.plant_id, d.body, d.event_time, d.attempts, d.hops, d.origin_event_id,
            ${SUBSCRIPTION_SEND_COLUMNS}
)
-- Always one row at least: how many were due tells the dispatcher whether to claim again as slots free up.
-- (Deliveries of disabled subscriptions stay pending without being due, so they do not count.)
SELECT claimed.*, n.due FROM (
  SELECT count(*)::int AS due FROM candidates c JOIN subscriptions s ON s.id = c.subscription_id AND s.enabled
) n LEFT JOIN claimed ON true`;

export class DeliveryRepository {
  constructor(private readonly pool: Pool) {}

  async claimDue(limit: number, excludeSubscriptions: string[], leaseMs: number): Promise<ClaimResult> {
    if (limit <= 0) return { claimed: [], more: true };
    // Planned on every call, with the real limit: a generic plan could sort the whole backlog.
    const { rows } = await this.pool.query<ClaimedRow & { due: number }>(CLAIM, [limit, excludeSubscriptions, leaseMs]);
    const claimed = rows.filter((r) => r.id !== null).map(toClaimedDelivery);
    return { claimed, more: rows[0].due > claimed.length };
  }

  /**
   * Records attempts and their consequences (next attempt, final status, a disabled subscription) for many
   * deliveries in one statement, so the dispatcher pays one round trip per batch rather than four per send.
   */
  async recordAttempts(records: AttemptRecord[]): Promise<void> {
    if (records.length === 0) return;
    const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
    // Named: parsed and planned once per connection, not once per batch.
    await this.pool.query({ name: 'record-attempts', text: RECORD_ATTEMPTS, values: [
      col((r) => r.deliveryId),
      col((r) => r.attempt.attemptedAt),
      col((r) => r.attempt.status),
      col((r) => r.attempt.latencyMs),
      col((r) => r.attempt.error),
      col((r) => r.attempt.responseBody),
      col((r) => (r.outcome.kind === 'retry' ? 'pending' : r.outcome.kind)),
      col((r) => (r.outcome.kind === 'retry' ? r.outcome.delayMs : 0)),
      col((r) => (r.outcome.kind === 'failed' ? (r.outcome.disableSubscription ?? null) : null)),
    ] });
  }

  /** Hands claimed-but-unsent deliveries back at once (on shutdown), instead of when their lease expires. */
  async releaseLeases(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query("UPDATE deliveries SET leased_until = NULL WHERE id = ANY($1::uuid[]) AND status = 'pending'", [ids]);
  }

  async countPending(): Promise<number> {
    const { rows } = await this.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'");
    return rows[0].n;
  }

  async list(
    filter: { subscriptionId?: string; status?: DeliveryStatus; plantId?: number },
    limit: number,
    after: number | null,
  ): Promise<Page<Delivery>> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::text IS NULL OR status = $2)
         AND ($3::bigint IS NULL OR plant_id = $3) AND ($4::bigint IS NULL OR seq < $4)
       ORDER BY seq DESC LIMIT $5`,
      [filter.subscriptionId ?? null, filter.status ?? null, filter.plantId ?? null, after, limit + 1],
    );
    return toPage(rows, limit, toDelivery);
  }

  async get(id: string): Promise<(Delivery & { attemptLog: DeliveryAttempt[] }) | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.pool.query<DeliveryRow & { attempt_log: DeliveryAttempt[] }>(
      `SELECT ${DELIVERY_COLUMNS}, attempt_log FROM deliveries WHERE id = $1`,
      [id],
    );
    if (!rows[0]) return null;
    return {
      ...toDelivery(rows[0]),
      // PostgreSQL wrote the times as +00:00; the API speaks Z, like every other timestamp it returns.
      attemptLog: rows[0].attempt_log.map((a) => ({ ...a, attemptedAt: new Date(a.attemptedAt).toISOString() })),
    };
  }

  /** A failed delivery goes back to pending for one more attempt, now. Null when it is not failed. */
  async retryNow(id: string): Promise<Delivery | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.pool.query<DeliveryRow>(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE id = $1 AND status = 'failed' RETURNING ${DELIVERY_COLUMNS}`,
      [id],
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  /** Re-queues every failed delivery of a subscription created since `since`. Returns how many. */
  async recover(subscriptionId: string, since: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2`,
      [subscriptionId, since],
    );
    return rowCount ?? 0;
  }
}
