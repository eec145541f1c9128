import { Pool } from 'pg';
import {
  ApplyResult,
  emptyApplyResult,
  IngestEvent,
  OutboxLease,
  PlantEventStore,
  SuppressedEvent,
} from '@app/delivery';
import { SecretBox } from '../secrets/secret-box';
import { newLease, SendRow, toClaimedDelivery } from '../sql/send-row';
import { APPLY_EVENTS } from './apply-events.sql';

/** Stores plant.created events with the deliveries they owe (see APPLY_EVENTS). */
export class IngestRepository implements PlantEventStore {
  constructor(
    private readonly pool: Pool,
    private readonly box: SecretBox,
  ) {}

  async applyEvents(events: IngestEvent[], lease: OutboxLease, maxHops: number): Promise<ApplyResult> {
    if (events.length === 0) return emptyApplyResult();
    const col = <K extends keyof IngestEvent>(k: K) => events.map((e) => e[k]);
    const taken = newLease(lease.leaseMs);
    // Named: each connection parses and plans this big statement once, not once per batch.
    const { rows } = await this.pool.query<{
      fresh: string[];
      applied: string[];
      unchanged: string[];
      key_reused: string[];
      suppressed: SuppressedEvent[];
      outboxed: number;
      taken: number;
      deferred: number;
      fanned: SendRow[];
    }>({
      name: APPLY_EVENTS.name,
      text: APPLY_EVENTS.text,
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
        lease.limit,
        lease.skipSubscriptions,
        lease.leaseMs,
        taken.token,
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
      leftForFanOut: r.outboxed - r.taken,
      deferred: r.deferred,
      fanned: r.fanned.map((row) => toClaimedDelivery(row, this.box, taken)),
    };
  }
}
