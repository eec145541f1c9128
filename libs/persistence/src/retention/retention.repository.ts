import { Pool } from 'pg';
import { PRUNE_DELIVERIES, PRUNE_OUTBOX_EVENTS, PRUNE_PROCESSED_EVENTS, PRUNE_SUBSCRIPTIONS } from './retention.sql';

export type PrunedTable = 'processed_events' | 'deliveries' | 'outbox_events' | 'subscriptions';

const PRUNE: Record<PrunedTable, string> = {
  processed_events: PRUNE_PROCESSED_EVENTS.text,
  deliveries: PRUNE_DELIVERIES.text,
  outbox_events: PRUNE_OUTBOX_EVENTS.text,
  subscriptions: PRUNE_SUBSCRIPTIONS.text,
};

export class RetentionRepository {
  constructor(private readonly pool: Pool) {}

  /** Deletes up to `limit` rows of `table` older than `before`; returns how many went. */
  async prune(table: PrunedTable, before: Date, limit: number): Promise<number> {
    const result = await this.pool.query(PRUNE[table], [before, limit]);
    return result.rowCount ?? 0;
  }
}
