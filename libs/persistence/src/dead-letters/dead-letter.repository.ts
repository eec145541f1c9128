import { Pool } from 'pg';
import { sqlFile } from '../sql/sql-file';

export const DEAD_LETTERS_SQL = sqlFile(__dirname, 'dead-letters.sql');
const ARCHIVE_DEAD_LETTERS = DEAD_LETTERS_SQL.statement('archive-dead-letters');
const LIST_DEAD_LETTERS = DEAD_LETTERS_SQL.statement('list-dead-letters');
const COUNT_DEAD = DEAD_LETTERS_SQL.statement('count-dead');
const FIND_DEAD_LETTERS = DEAD_LETTERS_SQL.statement('find-dead-letters');
const START_REDRIVE = DEAD_LETTERS_SQL.statement('start-redrive');
const FINISH_REDRIVE = DEAD_LETTERS_SQL.statement('finish-redrive');
const DISCARD_DEAD_LETTERS = DEAD_LETTERS_SQL.statement('discard-dead-letters');

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

export class DeadLetterRepository {
  constructor(private readonly pool: Pool) {}

  /**
   * Copies DLQ records; one already copied (the same partition and offset) is left as it is. Each one copied now
   * is a dead_letter.created operational event.
   */
  async archive(letters: ArchivedDeadLetter[]): Promise<number> {
    if (letters.length === 0) return 0;
    const col = <K extends keyof ArchivedDeadLetter>(k: K) => letters.map((l) => l[k]);
    const { rows } = await this.pool.query<{ stored: number }>(
      ARCHIVE_DEAD_LETTERS.text,
      ARCHIVE_DEAD_LETTERS.values({
        dlqPartitions: col('dlq_partition'),
        dlqOffsets: col('dlq_offset'),
        deadLetteredAt: col('dead_lettered_at'),
        reasons: col('reason'),
        originTopics: col('origin_topic'),
        originPartitions: col('origin_partition'),
        originOffsets: col('origin_offset'),
        keys: col('key'),
        values: col('value'),
        headers: letters.map((l) => JSON.stringify(l.headers)),
        truncated: col('truncated'),
      }),
    );
    return rows[0].stored;
  }

  /** Newest first, `limit` rows older than `beforeId` (the page cursor). */
  async list(status: DeadLetterStatus | undefined, limit: number, beforeId: number | null): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      LIST_DEAD_LETTERS.text,
      LIST_DEAD_LETTERS.values({ status: status ?? null, before: beforeId, limit }),
    );
    return rows;
  }

  /** Dead letters waiting for an operator (the status index answers it). */
  async countDead(): Promise<number> {
    const { rows } = await this.pool.query(COUNT_DEAD.text);
    return rows[0].n;
  }

  async findByIds(ids: number[]): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(FIND_DEAD_LETTERS.text, FIND_DEAD_LETTERS.values({ ids }));
    return rows;
  }

  /**
   * Takes the redrive of these dead letters: only one caller gets each (a redrive clicked twice publishes once).
   * Returns the rows taken; the others are not dead (already redriven, being redriven, or discarded).
   */
  async startRedrive(ids: number[], actor: string): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(START_REDRIVE.text, START_REDRIVE.values({ ids, actor }));
    return rows;
  }

  /** Published: redriven. Not published: dead again, for another try. */
  async finishRedrive(ids: number[], published: boolean): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      FINISH_REDRIVE.text,
      FINISH_REDRIVE.values({ ids, redriven: published ? 'redriven' : 'dead' }),
    );
  }

  /** Discards the dead ones among these; returns the rows discarded. */
  async discard(ids: number[], actor: string): Promise<DeadLetterRow[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      DISCARD_DEAD_LETTERS.text,
      DISCARD_DEAD_LETTERS.values({ ids, actor }),
    );
    return rows;
  }
}
