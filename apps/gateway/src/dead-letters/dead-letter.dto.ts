import type { Schema } from '@app/contracts';
import { DeadLetterRow } from '@app/persistence';

// The shapes are the document's (libs/contracts/src/openapi/schemas.ts), through the generated types.
export type DeadLetterDto = Schema<'DeadLetter'>;
/** With the original record. */
export type DeadLetterWithValueDto = Schema<'DeadLetterWithValue'>;
export type BulkResultDto = Schema<'DeadLetterBulkResult'>;

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
