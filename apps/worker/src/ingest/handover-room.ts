import { FanOutPlan, IngestEvent } from '@app/delivery';

/**
 * The deliveries each event of a write owes the dispatcher, in order, from its plan's pairs. A subscriber in
 * `skip` owes nothing here (its deliveries are written as rows), unless the write is to `waitFor` it (full here
 * for now): then its event does not fit at all, and the write waits rather than turn its deliveries into rows.
 */
export function deliveriesPerEvent(
  events: IngestEvent[],
  plan: FanOutPlan,
  skip: readonly string[],
  waitFor: (subscriptionId: string) => boolean = () => false,
): number[] {
  const skipped = new Set(skip);
  const waited = new Map<string, boolean>(); // asked once per subscriber: the dispatcher's answer costs a little
  const waits = (id: string) => waited.get(id) ?? (waited.set(id, waitFor(id)), waited.get(id)!);
  const perEvent = new Map<string, number>();
  for (const p of plan.pairs) {
    const n = !skipped.has(p.subscriptionId) ? 1 : waits(p.subscriptionId) ? Infinity : 0;
    perEvent.set(p.eventId, (perEvent.get(p.eventId) ?? 0) + n);
  }
  // An event id twice in a write has its pairs once (planFanOut): its second record owes nothing.
  const seen = new Set<string>();
  return events.map((e) => {
    if (seen.has(e.eventId)) return 0;
    seen.add(e.eventId);
    return perEvent.get(e.eventId) ?? 0;
  });
}

/** The subscribers an event's deliveries go to, by the plan. */
export const subscribersOf = (eventId: string, plan: FanOutPlan): string[] =>
  plan.pairs.filter((p) => p.eventId === eventId).map((p) => p.subscriptionId);

/** How many leading events fit in `room` deliveries: the part of a write the dispatcher takes on whole. */
export function fittingEvents(counts: readonly number[], room: number): number {
  let used = 0;
  for (const [i, n] of counts.entries()) {
    used += n;
    if (used > room) return i;
  }
  return counts.length;
}
