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

/** One delivery with its attempt log (`attemptedAt` as PostgreSQL wrote it). */
export interface DeliveryDetailRow extends DeliveryRow {
  attempt_log: DeliveryAttempt[];
}

export interface DeliveryFilter {
  subscriptionId?: string;
  status?: DeliveryStatus;
  plantId?: number;
}

const LISTED_COLUMNS =
  'id, seq, subscription_id, event_id, plant_id, status, attempts, next_attempt_at, created_at, updated_at';

/** What an operator reads and replays; sending is the outbox's (./outbox.repository.ts). */
export class DeliveryRepository {
  constructor(private readonly pool: Pool) {}

  /** Newest first, up to `limit` rows numbered below `beforeSeq` (all when null). */
  async listNewest(filter: DeliveryFilter, limit: number, beforeSeq: number | null): Promise<DeliveryRow[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${LISTED_COLUMNS} FROM deliveries
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::text IS NULL OR status = $2)
         AND ($3::bigint IS NULL OR plant_id = $3) AND ($4::bigint IS NULL OR seq < $4)
       ORDER BY seq DESC LIMIT $5`,
      [filter.subscriptionId ?? null, filter.status ?? null, filter.plantId ?? null, beforeSeq, limit],
    );
    return rows;
  }

  async findById(id: string): Promise<DeliveryDetailRow | null> {
    const { rows } = await this.pool.query<DeliveryDetailRow>(
      `SELECT ${LISTED_COLUMNS}, attempt_log FROM deliveries WHERE id = $1`,
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
