import { Pool } from 'pg';
import { ApplyResult, emptyApplyResult, IngestEvent, PlantEventStore, SuppressedEvent } from '@app/delivery';
import { APPLY_EVENTS } from './apply-events.sql';

/** Stores plant.created events with the deliveries they owe (see APPLY_EVENTS). */
export class IngestRepository implements PlantEventStore {
  constructor(private readonly pool: Pool) {}

  async applyEvents(events: IngestEvent[], maxHops: number): Promise<ApplyResult> {
    if (events.length === 0) return emptyApplyResult();
    const col = <K extends keyof IngestEvent>(k: K) => events.map((e) => e[k]);
    // Named: each connection parses and plans this big statement once, not once per batch.
    const { rows } = await this.pool.query<{
      fresh: string[];
      applied: string[];
      unchanged: string[];
      key_reused: string[];
      suppressed: SuppressedEvent[];
      outboxed: number;
    }>({
      name: 'apply-events',
      text: APPLY_EVENTS,
      values: [
        col('eventId'),
        col('plantId'),
        col('name'),
        col('tag'),
        col('eventTime'),
        col('topic'),
        col('partition'),
        col('offset'),
        col('hops'),
        col('originEventId'),
        maxHops,
        events.map((e) => JSON.stringify(e.extra)),
        col('traceparent'),
        col('digest'),
      ],
    });
    const r = rows[0];
    return {
      fresh: new Set(r.fresh),
      applied: new Set(r.applied),
      unchanged: new Set(r.unchanged),
      keyReused: r.key_reused,
      suppressed: r.suppressed,
      outboxed: r.outboxed,
    };
  }
}
