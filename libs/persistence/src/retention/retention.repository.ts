import { Pool } from 'pg';
import {
  ADD_LOG_PARTITIONS,
  DETACH_LOG_PARTITION,
  DROP_LOG_PARTITION,
  FINALIZE_LOG_PARTITION,
  LIST_LOG_PARTITIONS,
  LOCK_LOG_MAINTENANCE,
  PRUNE_DELIVERIES,
  PRUNE_OUTBOX_EVENTS,
  PRUNE_PROCESSED_EVENTS,
  PRUNE_SUBSCRIPTIONS,
  UNLOCK_LOG_MAINTENANCE,
} from './retention.sql';
import { Statement } from '../sql/statement';

export type PrunedTable = 'processed_events' | 'deliveries' | 'outbox_events' | 'subscriptions';

const PRUNE: Record<PrunedTable, string> = {
  processed_events: PRUNE_PROCESSED_EVENTS.text,
  deliveries: PRUNE_DELIVERIES.text,
  outbox_events: PRUNE_OUTBOX_EVENTS.text,
  subscriptions: PRUNE_SUBSCRIPTIONS.text,
};

const DAY_MS = 86_400_000;

/** What one pass over the delivery log did: partitions made ahead, and the days dropped (rows as estimated). */
export interface LogMaintenance {
  made: number;
  dropped: { day: string; estimatedRows: number }[];
}

/** A statement naming a day's partition of the log (DAY: YYYYMMDD, digits only, so nothing else gets in). */
export function forDay(s: Statement, day: string): string {
  if (!/^\d{8}$/.test(day)) throw new Error(`not a partition's day: ${day}`);
  return s.text.replace('DAY', day);
}

export class RetentionRepository {
  constructor(private readonly pool: Pool) {}

  /** Deletes up to `limit` rows of `table` older than `before`; returns how many went. */
  async prune(table: PrunedTable, before: Date, limit: number): Promise<number> {
    const result = await this.pool.query(PRUNE[table], [before, limit]);
    return result.rowCount ?? 0;
  }

  /**
   * Keeps the delivery log's partitions: those from yesterday to `aheadDays` ahead exist, and every day that ended
   * before `before` is detached and dropped (one left half detached by a cancelled sweep is finished first). Null
   * when another replica is at it. Needs the schema owner's rights (the pool's role).
   */
  async maintainLog(now: number, before: Date, aheadDays: number): Promise<LogMaintenance | null> {
    const client = await this.pool.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>(LOCK_LOG_MAINTENANCE.text);
      if (!rows[0]?.locked) return null;
      try {
        const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
        const made = await client.query<{ made: number }>(ADD_LOG_PARTITIONS.text, [
          iso(now - DAY_MS),
          iso(now + aheadDays * DAY_MS),
        ]);
        const parts = await client.query<{ day: string; state: string; estimated_rows: string }>(
          LIST_LOG_PARTITIONS.text,
        );
        const dropped: LogMaintenance['dropped'] = [];
        for (const p of parts.rows) {
          const end = Date.UTC(+p.day.slice(0, 4), +p.day.slice(4, 6) - 1, +p.day.slice(6, 8) + 1);
          // A detach is started only past the window: one left half done (or a table detached but not dropped) is
          // finished whatever the window says now.
          if (end > before.getTime() && p.state === 'attached') continue;
          if (p.state === 'attached') await client.query(forDay(DETACH_LOG_PARTITION, p.day));
          if (p.state === 'detaching') await client.query(forDay(FINALIZE_LOG_PARTITION, p.day));
          await client.query(forDay(DROP_LOG_PARTITION, p.day));
          dropped.push({ day: p.day, estimatedRows: Number(p.estimated_rows) });
        }
        return { made: made.rows[0]?.made ?? 0, dropped };
      } finally {
        await client.query(UNLOCK_LOG_MAINTENANCE.text);
      }
    } finally {
      client.release();
    }
  }
}
