import { FanOutPlan, IngestEvent } from '@app/delivery';

/**
 * The deliveries each event of a write owes the dispatcher, in order: its plan's pairs, leaving out the
 * subscribers the dispatcher skips (their deliveries become rows whatever the room).
 */
export function deliveriesPerEvent(events: IngestEvent[], plan: FanOutPlan, skip: readonly string[]): number[] {
  const skipped = new Set(skip);
  const perEvent = new Map<string, number>();
  for (const p of plan.pairs)
    if (!skipped.has(p.subscriptionId)) perEvent.set(p.eventId, (perEvent.get(p.eventId) ?? 0) + 1);
  // An event id twice in a write has its pairs once (planFanOut): its second record owes nothing.
  const seen = new Set<string>();
  return events.map((e) => {
    if (seen.has(e.eventId)) return 0;
    seen.add(e.eventId);
    return perEvent.get(e.eventId) ?? 0;
  });
}

/** How many leading events fit in `room` deliveries: the part of a write the dispatcher takes on whole. */
export function fittingEvents(counts: readonly number[], room: number): number {
  let used = 0;
  for (const [i, n] of counts.entries()) {
    used += n;
    if (used > room) return i;
  }
  return counts.length;
}
