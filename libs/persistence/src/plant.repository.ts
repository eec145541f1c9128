import { Pool } from 'pg';
import { Page, toPage } from './cursor';

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
}

export interface ApplyResult {
  /** Events seen for the first time (the rest were duplicates). */
  fresh: number;
  /** Plants inserted or updated (fresh events that were not older than what is stored). */
  applied: number;
  /** Deliveries recorded in the outbox for subscribers. */
  deliveries: number;
}

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
// latest event per plant, upsert it unless the stored plant comes from a newer event, and write one delivery
// per enabled subscription for every plant that changed (the transactional outbox).
const APPLY_EVENTS = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::int[], $8::bigint[])
    AS t(event_id, plant_id, name, tag, event_time, topic, kafka_partition, kafka_offset)
), fresh AS (
  INSERT INTO processed_events (event_id, plant_id, event_time, kafka_topic, kafka_partition, kafka_offset)
  SELECT event_id, plant_id, event_time, topic, kafka_partition, kafka_offset FROM input
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
), latest AS (
  SELECT DISTINCT ON (i.plant_id) i.* FROM input i JOIN fresh f USING (event_id)
  ORDER BY i.plant_id, i.event_time DESC, i.kafka_offset DESC
), upserted AS (
  INSERT INTO plants AS p (id, name, tag, last_event_id, last_event_time)
  SELECT plant_id, name, tag, event_id, event_time FROM latest
  ON CONFLICT (id) DO UPDATE
    SET name = EXCLUDED.name, tag = EXCLUDED.tag, updated_at = now(),
        last_event_id = EXCLUDED.last_event_id, last_event_time = EXCLUDED.last_event_time
    WHERE p.last_event_time <= EXCLUDED.last_event_time
  RETURNING p.id, p.name, p.tag, p.last_event_id, p.last_event_time
), outbox AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time)
  SELECT s.id, u.last_event_id, u.id,
         jsonb_strip_nulls(jsonb_build_object('id', u.id, 'name', u.name, 'tag', u.tag))::text, u.last_event_time
  FROM upserted u CROSS JOIN subscriptions s
  WHERE s.enabled
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM fresh)::int AS fresh,
       (SELECT count(*) FROM upserted)::int AS applied,
       (SELECT count(*) FROM outbox)::int AS deliveries`;

export class PlantRepository {
  constructor(private readonly pool: Pool) {}

  async applyEvents(events: PlantEventRow[]): Promise<ApplyResult> {
    if (events.length === 0) return { fresh: 0, applied: 0, deliveries: 0 };
    const col = <K extends keyof PlantEventRow>(k: K) => events.map((e) => e[k]);
    const { rows } = await this.pool.query<ApplyResult>(APPLY_EVENTS, [
      col('eventId'),
      col('plantId'),
      col('name'),
      col('tag'),
      col('eventTime'),
      col('topic'),
      col('partition'),
      col('offset'),
    ]);
    return rows[0];
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
