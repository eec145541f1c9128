import { Pool } from 'pg';
import { sqlFile } from '../sql/sql-file';

export const PLANTS_SQL = sqlFile(__dirname, 'plants.sql');
const FIND_PLANT = PLANTS_SQL.statement('find-plant');
const LIST_PLANTS = PLANTS_SQL.statement('list-plants');
const COUNT_STORED_SINCE = PLANTS_SQL.statement('count-stored-since');

/** A row of `plants`. */
export interface PlantRow {
  id: number;
  seq: number;
  name: string;
  tag: string | null;
  /** The other properties the plant came with (the published NewPlant allows them). */
  extra: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  last_event_id: string;
  last_event_time: Date;
}

/** Reads the store. Plants are written only by the ingest statement (../ingest). */
export class PlantRepository {
  constructor(private readonly pool: Pool) {}

  async findById(id: number): Promise<PlantRow | null> {
    const { rows } = await this.pool.query<PlantRow>(FIND_PLANT.text, FIND_PLANT.values({ id }));
    return rows[0] ?? null;
  }

  /** Newest first, up to `limit` rows stored before the row numbered `beforeSeq` (all when null). */
  async listNewest(limit: number, beforeSeq: number | null): Promise<PlantRow[]> {
    const { rows } = await this.pool.query<PlantRow>(
      LIST_PLANTS.text,
      LIST_PLANTS.values({ before: beforeSeq, limit }),
    );
    return rows;
  }

  /** Events stored (applied, changes or not) in the last `hours` hours; processed_events' BRIN bounds the scan. */
  async countStoredSince(hours: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      COUNT_STORED_SINCE.text,
      COUNT_STORED_SINCE.values({ hours }),
    );
    return rows[0].n;
  }
}
