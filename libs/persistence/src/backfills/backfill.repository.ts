import { Pool } from 'pg';
import { sqlFile } from '../sql/sql-file';

export const BACKFILLS_SQL = sqlFile(__dirname, 'backfills.sql');
const CREATE_BACKFILL = BACKFILLS_SQL.statement('create-backfill');
const LIST_BACKFILLS = BACKFILLS_SQL.statement('list-backfills');
const FIND_BACKFILL = BACKFILLS_SQL.statement('find-backfill');
const CANCEL_BACKFILL = BACKFILLS_SQL.statement('cancel-backfill');
const CLAIM_BACKFILLS = BACKFILLS_SQL.statement('claim-backfills');
const LOCK_BACKFILL = BACKFILLS_SQL.statement('lock-backfill');
const DROP_BACKFILL_ROWS = BACKFILLS_SQL.statement('drop-backfill-rows');
const QUEUE_BACKFILL = BACKFILLS_SQL.statement('queue-backfill');
const ADVANCE_BACKFILL = BACKFILLS_SQL.statement('advance-backfill');
const RELEASE_BACKFILLS = BACKFILLS_SQL.statement('release-backfills');

export type BackfillState = 'running' | 'cancelling' | 'completed' | 'cancelled';

/** A row of `backfills` (see migration 20). */
export interface BackfillRow {
  id: string;
  subscription_id: string;
  since: Date | null;
  rate_per_second: number;
  state: BackfillState;
  total: number;
  after_plant_id: string | null;
  exhausted: boolean;
  queued: number;
  pending: number;
  superseded: number;
  dropped: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** A backfill this worker holds, under its lease. */
export interface HeldBackfill {
  id: string;
  token: string;
}

/** What a tick left: the backfill's state, and whether it is paused (its subscription disabled). */
export interface BackfillStep {
  state: BackfillState;
  paused: boolean;
}

/** How far one tick may go. */
export interface BackfillTick {
  /** Since its last tick: it may queue its rate's worth of that. */
  elapsedMs: number;
  /** Its unsent deliveries are kept below this many seconds of its rate, beyond `settleMs`: a slow subscriber is
   * not sent a growing pile. */
  pendingSeconds: number;
  /** The wait before a queued delivery is due, ms (see queue-backfill in backfills.sql). */
  settleMs: number;
  leaseMs: number;
}

/** Plants looked at per tick at most, beyond what is queued (a narrow filter skips many). */
const SCAN_PER_TICK = 5000;

/** The backfills of subscriptions: asked for through the admin API, run by the worker (BackfillRunner). */
export class BackfillRepository {
  constructor(private readonly pool: Pool) {}

  /** Null when the subscription does not exist; throws ActiveBackfillError when one is running already. */
  async create(subscriptionId: string, since: Date | null, ratePerSecond: number, actor: string) {
    try {
      const { rows } = await this.pool.query<BackfillRow>(
        CREATE_BACKFILL.text,
        CREATE_BACKFILL.values({ subscription: subscriptionId, since, ratePerSecond, actor }),
      );
      return rows[0] ?? null;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new ActiveBackfillError();
      throw err;
    }
  }

  async list(subscriptionId: string): Promise<BackfillRow[]> {
    return (
      await this.pool.query<BackfillRow>(LIST_BACKFILLS.text, LIST_BACKFILLS.values({ subscription: subscriptionId }))
    ).rows;
  }

  async findById(id: string, subscriptionId: string): Promise<BackfillRow | null> {
    return (
      (
        await this.pool.query<BackfillRow>(
          FIND_BACKFILL.text,
          FIND_BACKFILL.values({ id, subscription: subscriptionId }),
        )
      ).rows[0] ?? null
    );
  }

  /** Null when it is not running (finished, or cancelled already). */
  async cancel(id: string, subscriptionId: string): Promise<BackfillRow | null> {
    return (
      (
        await this.pool.query<BackfillRow>(
          CANCEL_BACKFILL.text,
          CANCEL_BACKFILL.values({ id, subscription: subscriptionId }),
        )
      ).rows[0] ?? null
    );
  }

  async claim(limit: number, leaseMs: number, token: string): Promise<HeldBackfill[]> {
    if (limit <= 0) return [];
    const { rows } = await this.pool.query<{ id: string; lease_token: string }>(
      CLAIM_BACKFILLS.text,
      CLAIM_BACKFILLS.values({ limit, leaseMs, leaseToken: token }),
    );
    return rows.map((r) => ({ id: r.id, token: r.lease_token }));
  }

  /**
   * One step of a held backfill, in one transaction with its row locked: drops the unsent rows that must not go,
   * queues the next plants (unless it is stopping, paused with its subscription disabled, or done) and moves its
   * cursor with them, so a crash resumes exactly there. Its state after the step; null when its lease is lost.
   */
  async tick(held: HeldBackfill, t: BackfillTick): Promise<BackfillStep | null> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const locked = await client.query<BackfillRow & { subscription_enabled: boolean; subscription_deleted: boolean }>(
        LOCK_BACKFILL.text,
        LOCK_BACKFILL.values({ id: held.id, leaseToken: held.token }),
      );
      const b = locked.rows[0];
      if (!b) {
        await client.query('ROLLBACK');
        return null;
      }
      const stop = b.state === 'cancelling' || b.subscription_deleted;
      const drop = await client.query<{ superseded: number; dropped: number }>(
        DROP_BACKFILL_ROWS.text,
        DROP_BACKFILL_ROWS.values({ backfill: b.id, dropAll: stop }),
      );
      let { after_plant_id: cursor, exhausted } = b;
      let queued = 0;
      const rate = b.rate_per_second;
      const room = Math.min(
        Math.round((rate * t.elapsedMs) / 1000),
        Math.ceil(rate * (t.settleMs / 1000 + t.pendingSeconds)) - b.pending,
      );
      if (!stop && !exhausted && b.subscription_enabled && room > 0) {
        const q = await client.query<{ queued: number; cursor: string | null; exhausted: boolean }>(
          QUEUE_BACKFILL.text,
          QUEUE_BACKFILL.values({
            backfill: b.id,
            subscription: b.subscription_id,
            afterPlant: cursor,
            since: b.since,
            limit: room,
            scan: SCAN_PER_TICK + room,
            settleMs: t.settleMs,
            ratePerSecond: rate,
          }),
        );
        ({ queued, cursor, exhausted } = q.rows[0]);
      }
      const { rows } = await client.query<{ state: BackfillState }>(
        ADVANCE_BACKFILL.text,
        ADVANCE_BACKFILL.values({
          backfill: b.id,
          cursor,
          complete: exhausted,
          queued,
          superseded: drop.rows[0].superseded,
          dropped: drop.rows[0].dropped,
          stop,
          leaseMs: t.leaseMs,
        }),
      );
      await client.query('COMMIT');
      return { state: rows[0].state, paused: !stop && !b.subscription_enabled };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async release(held: HeldBackfill[]): Promise<void> {
    if (held.length === 0) return;
    await this.pool.query(
      RELEASE_BACKFILLS.text,
      RELEASE_BACKFILLS.values({ ids: held.map((h) => h.id), leaseTokens: held.map((h) => h.token) }),
    );
  }
}

/** One backfill per subscription at a time. */
export class ActiveBackfillError extends Error {}
