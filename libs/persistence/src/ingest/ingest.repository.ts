import { Pool } from 'pg';
import {
  ApplyResult,
  emptyApplyResult,
  FanOutPlan,
  IngestEvent,
  IntakeOffer,
  PlantEventStore,
  SuppressedEvent,
} from '@app/delivery';
import { newLease } from '../sql/send-row';
import { sqlFile } from '../sql/sql-file';

export const INGEST_SQL = sqlFile(__dirname, 'ingest.sql');
const APPLY_EVENTS = INGEST_SQL.statement('apply-events');

/** Stores plant.created events with the deliveries they owe (see ingest.sql). */
export class IngestRepository implements PlantEventStore {
  // The second argument (the SecretBox every repository is built with) is not needed: no credential passes here.
  constructor(
    private readonly pool: Pool,
    _box?: unknown,
  ) {}

  async applyEvents(
    events: IngestEvent[],
    lease: IntakeOffer,
    maxHops: number,
    plan: FanOutPlan,
  ): Promise<ApplyResult> {
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
      deferred_for: string[];
      current: boolean;
      sending_events: string[];
      sending_subscriptions: string[];
    }>({
      name: APPLY_EVENTS.name,
      text: APPLY_EVENTS.text,
      values: APPLY_EVENTS.values({
        eventIds: col('eventId'),
        plantIds: col('plantId'),
        names: col('name'),
        tags: col('tag'),
        eventTimes: col('eventTime'),
        topics: col('topic'),
        partitions: col('partition'),
        offsets: col('offset'),
        hops: col('hops'),
        originEventIds: col('originEventId'),
        maxHops,
        extras: events.map((e) => JSON.stringify(e.extra)),
        traceparents: col('traceparent'),
        digests: col('digest'),
        room: lease.limit,
        deferSubscriptions: lease.skipSubscriptions,
        leaseMs: lease.leaseMs,
        leaseToken: taken.token,
        pairEventIds: plan.pairs.map((p) => p.eventId),
        pairSubscriptionIds: plan.pairs.map((p) => p.subscriptionId),
        version: plan.version,
        bodies: plan.bodies,
      }),
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
      deferredFor: r.deferred_for,
      current: r.current,
      sending: r.sending_events.map((eventId, i) => ({ eventId, subscriptionId: r.sending_subscriptions[i] })),
      lease: taken,
    };
  }
}
