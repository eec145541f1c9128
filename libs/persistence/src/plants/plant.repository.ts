import { Pool } from 'pg';

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
    const { rows } = await this.pool.query<PlantRow>('SELECT * FROM plants WHERE id = $1', [id]);
    return rows[0] ?? null;
  }

  /** Newest first, up to `limit` rows stored before the row numbered `beforeSeq` (all when null). */
  async listNewest(limit: number, beforeSeq: number | null): Promise<PlantRow[]> {
    const { rows } = await this.pool.query<PlantRow>(
      'SELECT * FROM plants WHERE ($1::bigint IS NULL OR seq < $1) ORDER BY seq DESC LIMIT $2',
      [beforeSeq, limit],
    );
    return rows;
  }

  /** Events stored (applied, changes or not) in the last `hours` hours; processed_events' BRIN bounds the scan. */
  async countStoredSince(hours: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM processed_events WHERE processed_at >= now() - $1 * interval '1 hour'",
      [hours],
    );
    return rows[0].n;
  }
}
