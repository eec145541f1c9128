import { FanOutPlan, IngestEvent } from '@app/delivery';

/** What the dispatcher has room for, as ingest's write sees it (DeliveryInbox.roomFor). */
export interface HandOverRoom {
  /** Deliveries in all. */
  limit: number;
  /** Subscribers whose deliveries are written as rows whatever the room (a shut gate, a slow one). */
  skip: readonly string[];
  /** Of those, the ones full for now that the write waits for instead. */
  waitFor: (subscriptionId: string) => boolean;
  /** What one subscriber may still take on. */
  roomOf: (subscriptionId: string) => number;
}

/**
 * How many leading events the dispatcher takes on whole: their deliveries fit in the room in all and in each
 * subscriber's own (what is handed over past a subscriber's share would only be set aside as a row). A skipped
 * subscriber's deliveries take no room; one waited for makes its event not fit. An event id twice in a write has its
 * pairs once (planFanOut): its second record owes nothing.
 */
export function fittingEvents(events: IngestEvent[], plan: FanOutPlan, room: HandOverRoom): number {
  const skipped = new Set(room.skip);
  const owed = new Map<string, string[]>();
  for (const p of plan.pairs) {
    const ids = owed.get(p.eventId);
    if (ids) ids.push(p.subscriptionId);
    else owed.set(p.eventId, [p.subscriptionId]);
  }
  const left = new Map<string, number>();
  const leftOf = (id: string) => left.get(id) ?? (left.set(id, room.roomOf(id)), left.get(id)!);
  let total = room.limit;
  for (const [i, e] of events.entries()) {
    const ids = owed.get(e.eventId) ?? [];
    owed.delete(e.eventId);
    const taking = ids.filter((id) => !skipped.has(id));
    if (ids.some((id) => skipped.has(id) && room.waitFor(id))) return i;
    if (taking.length > total || taking.some((id) => leftOf(id) < 1)) return i;
    total -= taking.length;
    for (const id of taking) left.set(id, leftOf(id) - 1);
  }
  return events.length;
}

/** The subscribers an event's deliveries go to, by the plan. */
export const subscribersOf = (eventId: string, plan: FanOutPlan): string[] =>
  plan.pairs.filter((p) => p.eventId === eventId).map((p) => p.subscriptionId);
