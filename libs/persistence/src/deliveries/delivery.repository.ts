import { Pool } from 'pg';
import { DeliveryAttempt, DeliveryStatus } from '@app/delivery';
import { sqlFile } from '../sql/sql-file';

export const DELIVERIES_SQL = sqlFile(__dirname, 'deliveries.sql');
const LIST_DELIVERIES = DELIVERIES_SQL.statement('list-deliveries');
const FIND_DELIVERY = DELIVERIES_SQL.statement('find-delivery');
const RETRY_FAILED_DELIVERY = DELIVERIES_SQL.statement('retry-failed-delivery');
const RETRY_FAILED_MATCHING = DELIVERIES_SQL.statement('retry-failed-matching');
const COUNT_DELIVERIES_BY_STATUS = DELIVERIES_SQL.statement('count-deliveries-by-status');
const DELIVERIES_PER_MINUTE = DELIVERIES_SQL.statement('deliveries-per-minute');
const RETRY_FAILED_SINCE = DELIVERIES_SQL.statement('retry-failed-since');
const REPLAY_SINCE = DELIVERIES_SQL.statement('replay-since');
const HOLD_REPLAY = DELIVERIES_SQL.statement('hold-replay');
const RELEASE_REPLAY = DELIVERIES_SQL.statement('release-replay');

/** A row of `deliveries` as listings read it: not the body, nor the attempt log. */
export interface DeliveryRow {
  id: string;
  seq: number;
  subscription_id: string;
  event_id: string;
  /** null: an operational event (see event_type). */
  plant_id: number | null;
  /** null: a New Plant; else the operational event's type. */
  event_type: string | null;
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
  /** The subscription's custom headers, and the names of its secret ones (their values are never read here). */
  custom_headers: Record<string, string>;
  secret_header_names: string[];
  /** The backfill it belongs to, if any. */
  backfill_id: string | null;
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

/** One batch of a replay of everything since a time (replay-since, deliveries.sql). */
export interface ReplayBatch {
  /** Deliveries sent again, of which `moved` came back from the delivery log. */
  requeued: number;
  moved: number;
  /** Deliveries of every subscriber looked at. */
  lookedAt: number;
  /** The last seq looked at: the next batch starts after it. */
  cursor: number;
  /** Nothing left after the cursor. */
  exhausted: boolean;
}

/** What an operator reads and replays; sending is the outbox's (./outbox.repository.ts). */
export class DeliveryRepository {
  constructor(private readonly pool: Pool) {}

  /** Newest first, up to `limit` rows numbered below `beforeSeq` (all when null). */
  async listNewest(filter: DeliveryFilter, limit: number, beforeSeq: number | null): Promise<DeliveryRow[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      LIST_DELIVERIES.text,
      LIST_DELIVERIES.values({
        subscription: filter.subscriptionId ?? null,
        status: filter.status ?? null,
        plant: filter.plantId ?? null,
        before: beforeSeq,
        limit,
        since: filter.since ?? null,
        until: filter.until ?? null,
      }),
    );
    return rows;
  }

  async findById(id: string): Promise<DeliveryDetailRow | null> {
    const { rows } = await this.pool.query<DeliveryDetailRow>(FIND_DELIVERY.text, FIND_DELIVERY.values({ id }));
    return rows[0] ?? null;
  }

  /** A failed delivery goes back to pending for one more attempt, now. Null when it is not failed (or absent). */
  async retryFailed(id: string): Promise<DeliveryRow | null> {
    const { rows } = await this.pool.query<DeliveryRow>(
      RETRY_FAILED_DELIVERY.text,
      RETRY_FAILED_DELIVERY.values({ id }),
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
      RETRY_FAILED_MATCHING.text,
      RETRY_FAILED_MATCHING.values({
        subscription: filter.subscriptionId ?? null,
        plant: filter.plantId ?? null,
        since: filter.since ?? null,
        until: filter.until ?? null,
      }),
    );
    return rows;
  }

  /**
   * Deliveries created in the last `hours` by status: bounded by the created_at BRIN index, so it stays cheap
   * with a month of history.
   */
  async countByStatus(hours: number): Promise<Record<'pending' | 'succeeded' | 'failed', number>> {
    const { rows } = await this.pool.query<{ status: 'pending' | 'succeeded' | 'failed'; n: number }>(
      COUNT_DELIVERIES_BY_STATUS.text,
      COUNT_DELIVERIES_BY_STATUS.values({ hours }),
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
      DELIVERIES_PER_MINUTE.text,
      DELIVERIES_PER_MINUTE.values({ minutes }),
    );
    return rows;
  }

  /** Re-queues every failed delivery of a subscription created since `since`. Returns how many. */
  async retryFailedSince(subscriptionId: string, since: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      RETRY_FAILED_SINCE.text,
      RETRY_FAILED_SINCE.values({ subscription: subscriptionId, since }),
    );
    return rowCount ?? 0;
  }

  /**
   * One bounded batch of a replay of every New Plant delivery of a subscription whose event is at or after `since`,
   * after the cursor `afterSeq` (0 at the start): re-queues `limit` at most among `scan` deliveries looked at, due
   * `settleMs` from now. See replay-since in deliveries.sql.
   */
  async replaySince(
    subscriptionId: string,
    since: Date,
    afterSeq: number,
    b: { limit: number; scan: number; settleMs: number },
  ): Promise<ReplayBatch> {
    const { rows } = await this.pool.query<{
      requeued: number;
      moved: number;
      looked_at: number;
      cursor: string;
      exhausted: boolean;
    }>(
      REPLAY_SINCE.text,
      REPLAY_SINCE.values({
        subscription: subscriptionId,
        since,
        afterSeq,
        limit: b.limit,
        scan: b.scan,
        settleMs: b.settleMs,
      }),
    );
    const r = rows[0];
    return {
      requeued: r.requeued,
      moved: r.moved,
      lookedAt: r.looked_at,
      cursor: Number(r.cursor),
      exhausted: r.exhausted,
    };
  }

  /**
   * Takes the subscription's replay hold for `forMs` at most as `holder`: true when taken, else when the hold
   * another call has ends (see hold-replay).
   */
  async holdReplay(subscriptionId: string, holder: string, forMs: number): Promise<true | Date> {
    const { rows } = await this.pool.query<{ taken: Date | null; held: Date | null }>(
      HOLD_REPLAY.text,
      HOLD_REPLAY.values({ subscription: subscriptionId, holder, forMs }),
    );
    return rows[0]?.taken ? true : (rows[0]?.held ?? new Date());
  }

  async releaseReplay(subscriptionId: string, holder: string): Promise<void> {
    await this.pool.query(RELEASE_REPLAY.text, RELEASE_REPLAY.values({ subscription: subscriptionId, holder }));
  }
}
