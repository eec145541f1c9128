import { Pool } from 'pg';
import { DeliveryAttempt, DeliveryStatus } from '@app/delivery';

/** A row of `deliveries` as listings read it: not the body, nor the attempt log. */
export interface DeliveryRow {
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

/** One delivery with what it sends and its attempt log (`attemptedAt` as PostgreSQL wrote it). */
export interface DeliveryDetailRow extends DeliveryRow {
  attempt_log: DeliveryAttempt[];
  body: string;
  hops: number;
  origin_event_id: string | null;
  /** Whether the subscription sends a token of its own (the token itself is never read here). */
  has_token: boolean;
}

export interface DeliveryFilter {
  subscriptionId?: string;
  status?: DeliveryStatus;
  plantId?: number;
  /** Created at or after. */
  since?: Date;
  /** Created before. */
  until?: Date;
}

/** Deliveries per minute, for the console's chart. */
export interface MinuteRow {
  minute: Date;
  accepted: number;
  delivered: number;
  failed: number;
}

const LISTED_COLUMNS =
  'id, seq, subscription_id, event_id, plant_id, status, attempts, next_attempt_at, created_at, updated_at';
const columnsOf = (alias: string) =>
  LISTED_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** What an operator reads and replays; sending is the outbox's (./outbox.repository.ts). */
export class DeliveryRepository {
  constructor(private readonly pool: Pool) {}

  /** Newest first, up to `limit` rows numbered below `beforeSeq` (all when null). */
  async listNewest(filter: DeliveryFilter, limit: number, beforeSeq: number | null): Promise<DeliveryRow[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${LISTED_COLUMNS} FROM deliveries
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::text IS NULL OR status = $2)
         AND ($3::bigint IS NULL OR plant_id = $3) AND ($4::bigint IS NULL OR seq < $4)
         AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
       ORDER BY seq DESC LIMIT $5`,
      [
        filter.subscriptionId ?? null,
        filter.status ?? null,
        filter.plantId ?? null,
        beforeSeq,
        limit,
        filter.since ?? null,
        filter.until ?? null,
      ],
    );
    return rows;
  }

  async findById(id: string): Promise<DeliveryDetailRow | null> {
    const { rows } = await this.pool.query<DeliveryDetailRow>(
      // A delivery that succeeded at once has no body of its own: its event's outbox row holds it.
      `SELECT ${columnsOf('d')}, d.attempt_log, coalesce(d.body, e.body) AS body, d.hops, d.origin_event_id,
              s.token IS NOT NULL AS has_token
       FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
       LEFT JOIN outbox_events e ON d.body IS NULL AND e.event_id = d.event_id
       WHERE d.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** A failed delivery goes back to pending for one more attempt, now. Null when it is not failed (or absent). */
  async retryFailed(id: string): Promise<DeliveryRow | null> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE id = $1 AND status = 'failed'
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING ${LISTED_COLUMNS}`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Re-queues every failed delivery that matches (its status filter aside), except those of deleted
   * subscriptions. Returns what it re-queued, for the audit trail.
   */
  async retryFailedMatching(
    filter: Omit<DeliveryFilter, 'status'>,
  ): Promise<{ id: string; subscription_id: string }[]> {
    const { rows } = await this.pool.query<{ id: string; subscription_id: string }>(
      `UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE d.status = 'failed'
         AND ($1::uuid IS NULL OR d.subscription_id = $1) AND ($2::bigint IS NULL OR d.plant_id = $2)
         AND ($3::timestamptz IS NULL OR d.created_at >= $3) AND ($4::timestamptz IS NULL OR d.created_at < $4)
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING d.id, d.subscription_id`,
      [filter.subscriptionId ?? null, filter.plantId ?? null, filter.since ?? null, filter.until ?? null],
    );
    return rows;
  }

  /**
   * Deliveries created in the last `hours` by status: bounded by the created_at BRIN index, so it stays cheap
   * with a month of history.
   */
  async countByStatus(hours: number): Promise<Record<'pending' | 'succeeded' | 'failed', number>> {
    const { rows } = await this.pool.query<{ status: 'pending' | 'succeeded' | 'failed'; n: number }>(
      `SELECT status, count(*)::int AS n FROM deliveries WHERE created_at >= now() - $1 * interval '1 hour'
       GROUP BY status`,
      [hours],
    );
    const counts = { pending: 0, succeeded: 0, failed: 0 };
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }

  /**
   * The last `minutes` minutes, one row each (zeros included): events stored (accepted through the pipeline),
   * deliveries that succeeded and deliveries that failed for good in that minute. Only deliveries created in
   * the window are looked at (the BRIN index bounds the scan): a retry finishing a delivery from before it is
   * not drawn.
   */
  async perMinute(minutes: number): Promise<MinuteRow[]> {
    const { rows } = await this.pool.query<MinuteRow>(
      `WITH m AS (
         SELECT generate_series(date_trunc('minute', now()) - ($1 - 1) * interval '1 minute',
                                date_trunc('minute', now()), interval '1 minute') AS minute
       ), e AS (
         SELECT date_trunc('minute', processed_at) AS minute, count(*)::int AS n FROM processed_events
         WHERE processed_at >= now() - $1 * interval '1 minute' GROUP BY 1
       ), d AS (
         SELECT date_trunc('minute', updated_at) AS minute,
                count(*) FILTER (WHERE status = 'succeeded')::int AS delivered,
                count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM deliveries WHERE created_at >= now() - $1 * interval '1 minute' AND status <> 'pending' GROUP BY 1
       )
       SELECT m.minute, coalesce(e.n, 0) AS accepted, coalesce(d.delivered, 0) AS delivered,
              coalesce(d.failed, 0) AS failed
       FROM m LEFT JOIN e USING (minute) LEFT JOIN d USING (minute) ORDER BY m.minute`,
      [minutes],
    );
    return rows;
  }

  /** Re-queues every failed delivery of a subscription created since `since`. Returns how many. */
  async retryFailedSince(subscriptionId: string, since: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2`,
      [subscriptionId, since],
    );
    return rowCount ?? 0;
  }
}
