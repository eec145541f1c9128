import { Pool } from 'pg';

export type DeadLetterStatus = 'dead' | 'redriving' | 'redriven' | 'discarded';

/** A row of `dead_letters`: one record of plant.created.dlq and what an operator did to it. */
export interface DeadLetterRow {
  id: number;
  /** The same as `id`, under the name the admin API's paging uses. */
  seq: number;
  dlq_partition: number;
  dlq_offset: string;
  dead_lettered_at: Date;
  reason: string;
  origin_topic: string | null;
  origin_partition: number | null;
  origin_offset: string | null;
  key: Buffer | null;
  value: Buffer | null;
  /** Original header values, base64. */
  headers: Record<string, string>;
  truncated: boolean;
  status: DeadLetterStatus;
  changed_at: Date | null;
  changed_by: string | null;
}

export type ArchivedDeadLetter = Omit<DeadLetterRow, 'id' | 'seq' | 'status' | 'changed_at' | 'changed_by'>;

/**
 * A `redriving` row whose redrive did not finish (the gateway died between publishing and marking it) may be
 * redriven again after this long: publishing twice is harmless, since the worker applies an event id once.
 */
const STUCK_REDRIVE = "interval '2 minutes'";

export class DeadLetterRepository {
  constructor(private readonly pool: Pool) {}

  /** Copies DLQ records; one already copied (the same partition and offset) is left as it is. */
  async archive(letters: ArchivedDeadLetter[]): Promise<number> {
    if (letters.length === 0) return 0;
    const col = <K extends keyof ArchivedDeadLetter>(k: K) => letters.map((l) => l[k]);
    const { rowCount } = await this.pool.query(
      `INSERT INTO dead_letters (dlq_partition, dlq_offset, dead_lettered_at, reason, origin_topic, origin_partition,
                                 origin_offset, key, value, headers, truncated)
       SELECT * FROM unnest($1::int[], $2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::int[], $7::bigint[],
                            $8::bytea[], $9::bytea[], $10::jsonb[], $11::boolean[])
       ON CONFLICT (dlq_partition, dlq_offset) DO NOTHING`,
      [
        col('dlq_partition'),
        col('dlq_offset'),
        col('dead_lettered_at'),
        col('reason'),
        col('origin_topic'),
        col('origin_partition'),
        col('origin_offset'),
        col('key'),
        col('value'),
        letters.map((l) => JSON.stringify(l.headers)),
        col('truncated'),
      ],
    );
    return rowCount ?? 0;
  }

  /** Newest first, `limit` rows older than `beforeId` (the page cursor). */
  async list(status: DeadLetterStatus | undefined, limit: number, beforeId: number | null): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      `SELECT *, id AS seq FROM dead_letters
       WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3`,
      [status ?? null, beforeId, limit],
    );
    return rows;
  }

  /** Dead letters waiting for an operator (the status index answers it). */
  async countDead(): Promise<number> {
    const { rows } = await this.pool.query("SELECT count(*)::int AS n FROM dead_letters WHERE status = 'dead'");
    return rows[0].n;
  }

  async findByIds(ids: number[]): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      'SELECT *, id AS seq FROM dead_letters WHERE id = ANY($1::bigint[]) ORDER BY id',
      [ids],
    );
    return rows;
  }

  /**
   * Takes the redrive of these dead letters: only one caller gets each (a redrive clicked twice publishes once).
   * Returns the rows taken; the others are not dead (already redriven, being redriven, or discarded).
   */
  async startRedrive(ids: number[], actor: string): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      `UPDATE dead_letters SET status = 'redriving', changed_at = now(), changed_by = $2
       WHERE id = ANY($1::bigint[])
         AND (status = 'dead' OR (status = 'redriving' AND changed_at < now() - ${STUCK_REDRIVE}))
       RETURNING *, id AS seq`,
      [ids, actor],
    );
    return rows;
  }

  /** Published: redriven. Not published: dead again, for another try. */
  async finishRedrive(ids: number[], published: boolean): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE dead_letters SET status = $2, changed_at = now() WHERE id = ANY($1::bigint[]) AND status = 'redriving'`,
      [ids, published ? 'redriven' : 'dead'],
    );
  }

  /** Discards the dead ones among these; returns the rows discarded. */
  async discard(ids: number[], actor: string): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      `UPDATE dead_letters SET status = 'discarded', changed_at = now(), changed_by = $2
       WHERE id = ANY($1::bigint[]) AND status = 'dead'
       RETURNING *, id AS seq`,
      [ids, actor],
    );
    return rows;
  }
}
