import { ApplyResult, IngestEvent } from '@app/delivery';

export type EventOutcome = 'stored' | 'duplicate' | 'key_reused' | 'unchanged' | 'stale';

/**
 * What became of each of a batch's events, for plant_store_events_total: every event counted once. An event id
 * the result calls fresh counts as fresh for its first record only; a later record with the same id (a
 * producer retry that wrote it twice, or a reused key) is a duplicate or, with another plant, key_reused. The
 * result may cover other partitions' batches too: only these events are counted.
 */
export function countOutcomes(events: IngestEvent[], r: ApplyResult): Record<EventOutcome, number> {
  const counts: Record<EventOutcome, number> = { stored: 0, duplicate: 0, key_reused: 0, unchanged: 0, stale: 0 };
  const reused = new Set(r.keyReused);
  const counted = new Set<string>();
  for (const e of events) {
    if (reused.has(`${e.partition}:${e.offset}`)) counts.key_reused++;
    else if (!r.fresh.has(e.eventId) || counted.has(e.eventId)) counts.duplicate++;
    else {
      counted.add(e.eventId);
      if (r.applied.has(e.eventId)) counts.stored++;
      else if (r.unchanged.has(e.eventId)) counts.unchanged++;
      else counts.stale++;
    }
  }
  return counts;
}
