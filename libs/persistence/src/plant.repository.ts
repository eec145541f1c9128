import { Pool } from 'pg';
import { Page, toPage } from './cursor';
import { ClaimedDelivery, ClaimedRow, SUBSCRIPTION_SEND_COLUMNS, toClaimedDelivery } from './delivery.repository';

/** One decoded plant.created event with the Kafka position it came from. */
export interface PlantEventRow {
  eventId: string;
  plantId: number;
  name: string;
  tag: string | null;
  eventTime: string;
  topic: string;
  partition: number;
  offset: string;
  /** Plant Store deliveries the data went through before this event (LoopHeaders). */
  hops: number;
  /** The event that started the chain: this one's own id when it came straight from a sender. */
  originEventId: string;
}

/** A changed plant whose event had been through too many deliveries to be delivered again. */
export interface SuppressedEvent {
  eventId: string;
  plantId: number;
  hops: number;
  originEventId: string;
}

export interface ApplyResult {
  /** Ids of the events seen for the first time (the rest were duplicates). */
  fresh: Set<string>;
  /** Ids of the events whose plant was inserted or updated (fresh, newer than what is stored, and different). */
  applied: Set<string>;
  /** Ids of fresh events that were newer than the stored plant but carried the same data: nothing changed. */
  unchanged: Set<string>;
  /** Applied events not fanned out, because they had been through MAX_WEBHOOK_HOPS deliveries already. */
  suppressed: SuppressedEvent[];
  /** Deliveries recorded in the outbox for subscribers. */
  deliveries: number;
  /** Of those, the ones leased to the caller as they were written, to send at once (see OutboxLease). */
  leased: ClaimedDelivery[];
}

/**
 * How many of the deliveries it writes the caller (the worker's dispatcher) can take on right away. Those are
 * written already leased to it: nobody else can see them before the commit, so there is nothing to claim
 * from anyone, and the dispatcher skips the claim query for them. The rest are left for claims.
 */
export interface OutboxLease {
  limit: number;
  /** Events that have been through this many deliveries are stored but not delivered again (MAX_WEBHOOK_HOPS). */
  maxHops?: number;
  /** Subscriptions whose queue is full here: their deliveries are left for claims (by any replica). */
  skipSubscriptions: string[];
  leaseMs: number;
}

/** Lease nothing: every delivery written is left for claims. */
export const NO_LEASE: OutboxLease = { limit: 0, skipSubscriptions: [], leaseMs: 0 };

/** A result with nothing in it, to add to (its sets are new each time). */
export const emptyApplyResult = (): ApplyResult => ({
  fresh: new Set(),
  applied: new Set(),
  unchanged: new Set(),
  suppressed: [],
  deliveries: 0,
  leased: [],
});

/** With no lease, a statement still needs a hop limit: the default of MAX_WEBHOOK_HOPS. */
export const DEFAULT_MAX_HOPS = 10;

export interface StoredPlant {
  id: number;
  name: string;
  tag?: string;
  createdAt: string;
  updatedAt: string;
  lastEventId: string;
}

interface PlantRow {
  id: number;
  seq: number;
  name: string;
  tag: string | null;
  created_at: Date;
  updated_at: Date;
  last_event_id: string;
}

// One statement, one round trip, for a whole batch: record the event ids (duplicates drop out), keep the
// latest event per plant, upsert it unless the stored plant comes from a newer event or already holds the
// same data (an update that changes nothing changes and sends nothing: that is what ends an echo loop), and
// write one delivery per enabled subscription for every plant that changed (the transactional outbox),
// unless its event has already been through MAX_WEBHOOK_HOPS deliveries (a loop that changes data).
const APPLY_EVENTS = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::int[], $8::bigint[],
                       $9::int[], $10::text[])
    AS t(event_id, plant_id, name, tag, event_time, topic, kafka_partition, kafka_offset, hops, origin_event_id)
), fresh AS (
  INSERT INTO processed_events (event_id, plant_id, event_time, kafka_topic, kafka_partition, kafka_offset)
  SELECT event_id, plant_id, event_time, topic, kafka_partition, kafka_offset FROM input
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
), latest AS (
  SELECT DISTINCT ON (i.plant_id) i.* FROM input i JOIN fresh f USING (event_id)
  ORDER BY i.plant_id, i.event_time DESC, i.kafka_offset DESC
), unchanged AS (
  -- Read from the snapshot before the upsert: newer than what is stored, but the same data.
  SELECT l.event_id FROM latest l JOIN plants p ON p.id = l.plant_id
  WHERE p.last_event_time <= l.event_time AND p.name = l.name AND p.tag IS NOT DISTINCT FROM l.tag
), upserted AS (
  INSERT INTO plants AS p (id, name, tag, last_event_id, last_event_time)
  SELECT plant_id, name, tag, event_id, event_time FROM latest
  ON CONFLICT (id) DO UPDATE
    SET name = EXCLUDED.name, tag = EXCLUDED.tag, updated_at = now(),
        last_event_id = EXCLUDED.last_event_id, last_event_time = EXCLUDED.last_event_time
    WHERE p.last_event_time <= EXCLUDED.last_event_time
      AND (p.name, p.tag) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.tag)
  RETURNING p.id, p.name, p.tag, p.last_event_id, p.last_event_time
), changed AS (
  SELECT u.*, l.hops, l.origin_event_id FROM upserted u JOIN latest l ON l.event_id = u.last_event_id
), fanout AS (
  -- A delivery waits while an earlier one for the same subscriber and plant is pending (per-plant order);
  -- the new rows are not visible to this snapshot, so any pending one found is earlier.
  SELECT s.id AS subscription_id, u.last_event_id AS event_id, u.id AS plant_id, u.last_event_time AS event_time,
         u.hops, u.origin_event_id,
         jsonb_strip_nulls(jsonb_build_object('id', u.id, 'name', u.name, 'tag', u.tag))::text AS body,
         NOT (s.id = ANY($12::uuid[])) AND NOT EXISTS (
           SELECT 1 FROM deliveries e WHERE e.subscription_id = s.id AND e.plant_id = u.id AND e.status = 'pending') AS free
  FROM changed u CROSS JOIN subscriptions s
  WHERE s.enabled AND u.hops < $14
), ranked AS (
  SELECT f.*, f.free AND row_number() OVER (PARTITION BY f.free ORDER BY f.event_time, f.plant_id, f.subscription_id) <= $11 AS leased
  FROM fanout f
), outbox AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id, leased_until)
  SELECT subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
         CASE WHEN leased THEN now() + $13 * interval '1 millisecond' END
  FROM ranked
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING id, subscription_id, event_id, plant_id, body, event_time, attempts, hops, origin_event_id, leased_until
)
SELECT (SELECT coalesce(array_agg(event_id), '{}') FROM fresh) AS fresh,
       (SELECT coalesce(array_agg(last_event_id), '{}') FROM upserted) AS applied,
       (SELECT coalesce(array_agg(event_id), '{}') FROM unchanged) AS unchanged,
       (SELECT coalesce(json_agg(json_build_object('eventId', last_event_id, 'plantId', id, 'hops', hops, 'originEventId', origin_event_id)), '[]')
          FROM changed WHERE hops >= $14) AS suppressed,
       (SELECT count(*) FROM outbox)::int AS deliveries,
       (SELECT coalesce(json_agg(h), '[]') FROM (
          SELECT o.id, o.subscription_id, o.event_id, o.plant_id, o.body, o.event_time, o.attempts, o.hops, o.origin_event_id,
                 ${SUBSCRIPTION_SEND_COLUMNS}
          FROM outbox o JOIN subscriptions s ON s.id = o.subscription_id
          WHERE o.leased_until IS NOT NULL) h) AS leased`;

export class PlantRepository {
  constructor(private readonly pool: Pool) {}

  async applyEvents(events: PlantEventRow[], lease: OutboxLease = NO_LEASE): Promise<ApplyResult> {
    if (events.length === 0) return emptyApplyResult();
    const col = <K extends keyof PlantEventRow>(k: K) => events.map((e) => e[k]);
    // Named: each connection parses and plans this big statement once, not once per batch.
    const { rows } = await this.pool.query<{
      fresh: string[];
      applied: string[];
      unchanged: string[];
      suppressed: SuppressedEvent[];
      deliveries: number;
      leased: ClaimedRow[];
    }>({ name: 'apply-events', text: APPLY_EVENTS, values: [
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
      lease.limit,
      lease.skipSubscriptions,
      lease.leaseMs,
      lease.maxHops ?? DEFAULT_MAX_HOPS,
    ] });
    const r = rows[0];
    return {
      fresh: new Set(r.fresh),
      applied: new Set(r.applied),
      unchanged: new Set(r.unchanged),
      suppressed: r.suppressed,
      deliveries: r.deliveries,
      leased: r.leased.map(toClaimedDelivery),
    };
  }

  async findPlant(id: number): Promise<StoredPlant | null> {
    const { rows } = await this.pool.query<PlantRow>('SELECT * FROM plants WHERE id = $1', [id]);
    return rows[0] ? toStoredPlant(rows[0]) : null;
  }

  /** Newest first. `after` is the sequence number from the previous page's cursor. */
  async listPlants(limit: number, after: number | null): Promise<Page<StoredPlant>> {
    const { rows } = await this.pool.query<PlantRow>(
      'SELECT * FROM plants WHERE ($1::bigint IS NULL OR seq < $1) ORDER BY seq DESC LIMIT $2',
      [after, limit + 1],
    );
    return toPage(rows, limit, toStoredPlant);
  }
}

function toStoredPlant(r: PlantRow): StoredPlant {
  return {
    id: r.id,
    name: r.name,
    ...(r.tag === null ? {} : { tag: r.tag }),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    lastEventId: r.last_event_id,
  };
}
