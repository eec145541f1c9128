import { DeadLetterRow } from '@app/persistence';

/** A dead letter as the admin API lists it (DeadLetter in /openapi.json). */
export interface DeadLetterDto {
  id: string;
  status: DeadLetterRow['status'];
  reason: string;
  deadLetteredAt: string;
  origin: {
    topic: string | null;
    partition: number | null;
    offset: string | null;
    deadLetterPartition: number;
    deadLetterOffset: string;
  };
  key: string | null;
  truncated: boolean;
  changedAt: string | null;
  changedBy: string | null;
}

/** With the original record (DeadLetterWithValue). */
export interface DeadLetterWithValueDto extends DeadLetterDto {
  value: string | null;
  valueBase64: string | null;
  headers: Record<string, string>;
}

export const mapDeadLetter = (r: DeadLetterRow): DeadLetterDto => ({
  id: String(r.id),
  status: r.status,
  reason: r.reason,
  deadLetteredAt: r.dead_lettered_at.toISOString(),
  origin: {
    topic: r.origin_topic,
    partition: r.origin_partition,
    offset: r.origin_offset === null ? null : String(r.origin_offset),
    deadLetterPartition: r.dlq_partition,
    deadLetterOffset: String(r.dlq_offset),
  },
  key: r.key === null ? null : r.key.toString('utf8'),
  truncated: r.truncated,
  changedAt: r.changed_at?.toISOString() ?? null,
  changedBy: r.changed_by,
});

export const mapDeadLetterWithValue = (r: DeadLetterRow): DeadLetterWithValueDto => ({
  ...mapDeadLetter(r),
  value: r.value === null ? null : r.value.toString('utf8'),
  valueBase64: r.value === null ? null : r.value.toString('base64'),
  headers: Object.fromEntries(
    Object.entries(r.headers).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  ),
});

export interface BulkResultDto {
  done: string[];
  skipped: { id: string; status: string }[];
}
