import { Pool } from 'pg';
import { NamedStatement, sqlFile } from '../sql/sql-file';

export const RETENTION_SQL = sqlFile(__dirname, 'retention.sql');
const PRUNE_PROCESSED_EVENTS = RETENTION_SQL.statement('prune-processed-events');
const PRUNE_DELIVERIES = RETENTION_SQL.statement('prune-deliveries');
const PRUNE_OUTBOX_EVENTS = RETENTION_SQL.statement('prune-outbox-events');
const PRUNE_SUBSCRIPTIONS = RETENTION_SQL.statement('prune-subscriptions');
const LOCK_LOG_MAINTENANCE = RETENTION_SQL.statement('lock-log-maintenance');
const UNLOCK_LOG_MAINTENANCE = RETENTION_SQL.statement('unlock-log-maintenance');
const ADD_LOG_PARTITIONS = RETENTION_SQL.statement('add-log-partitions');
const LIST_LOG_PARTITIONS = RETENTION_SQL.statement('list-log-partitions');
const DETACH_LOG_PARTITION = RETENTION_SQL.statement('detach-log-partition');
const FINALIZE_LOG_PARTITION = RETENTION_SQL.statement('finalize-log-partition');
const DROP_LOG_PARTITION = RETENTION_SQL.statement('drop-log-partition');

export type PrunedTable = 'processed_events' | 'deliveries' | 'outbox_events' | 'subscriptions';

const PRUNE: Record<PrunedTable, NamedStatement> = {
  processed_events: PRUNE_PROCESSED_EVENTS,
  deliveries: PRUNE_DELIVERIES,
  outbox_events: PRUNE_OUTBOX_EVENTS,
  subscriptions: PRUNE_SUBSCRIPTIONS,
};

const DAY_MS = 86_400_000;

/** What one pass over the delivery log did: partitions made ahead, and the days dropped (rows as estimated). */
export interface LogMaintenance {
  made: number;
  dropped: { day: string; estimatedRows: number }[];
}

/** A statement naming a day's partition of the log (DAY: YYYYMMDD, digits only, so nothing else gets in). */
export function forDay(s: NamedStatement, day: string): string {
  if (!/^\d{8}$/.test(day)) throw new Error(`not a partition's day: ${day}`);
  return s.text.replace('DAY', day);
}

export class RetentionRepository {
  constructor(private readonly pool: Pool) {}

  /** Deletes up to `limit` rows of `table` older than `before`; returns how many went. */
  async prune(table: PrunedTable, before: Date, limit: number): Promise<number> {
    const prune = PRUNE[table];
    const result = await this.pool.query(prune.text, prune.values({ before, limit }));
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
        const made = await client.query<{ made: number }>(
          ADD_LOG_PARTITIONS.text,
          ADD_LOG_PARTITIONS.values({ firstDay: iso(now - DAY_MS), lastDay: iso(now + aheadDays * DAY_MS) }),
        );
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
