import { KafkaMessage } from 'kafkajs';
import { DeadLetterHeaders, toStorableText } from '@app/contracts';
import { ArchivedDeadLetter } from '@app/persistence';
import { headerString } from '../ingest/ingest-batch';

const OURS = new Set<string>(Object.values(DeadLetterHeaders));

/**
 * A plant.created.dlq record as a dead_letters row: where it came from and why (our x- headers), and the original
 * key, value and headers as they were (each header value base64: poison may be any bytes).
 */
export function toArchivedDeadLetter(partition: number, m: KafkaMessage): ArchivedDeadLetter {
  // Header text is any bytes (a reason may quote the poison): a NUL would make the row, and so the archive, fail.
  const header = (name: string) => {
    const v = headerString(m.headers, name);
    return v === undefined ? undefined : toStorableText(v);
  };
  const original: Record<string, string> = {};
  for (const [name, v] of Object.entries(m.headers ?? {})) {
    if (OURS.has(name) || v === undefined) continue;
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined) original[name] = Buffer.from(first).toString('base64');
  }
  const digits = (name: string) => {
    const v = header(name);
    return v !== undefined && /^\d+$/.test(v) ? v : null;
  };
  const partitionText = digits(DeadLetterHeaders.partition);
  return {
    dlq_partition: partition,
    dlq_offset: m.offset,
    dead_lettered_at: new Date(Number(m.timestamp)),
    reason: header(DeadLetterHeaders.reason) ?? 'unknown (no x-error header)',
    origin_topic: header(DeadLetterHeaders.topic) ?? null,
    origin_partition: partitionText === null ? null : Number(partitionText),
    origin_offset: digits(DeadLetterHeaders.offset),
    key: m.key ?? null,
    value: m.value ?? null,
    headers: original,
    truncated: header(DeadLetterHeaders.truncated) === 'true',
  };
}
