// Storing a plant.created event and the deliveries it owes (the transactional outbox): what goes in, what
// comes out, and how much of the fan-out the storing worker takes on itself.
import { DeliveryLease } from './delivery';

/** One decoded plant.created event with the Kafka position it came from. */
export interface IngestEvent {
  eventId: string;
  plantId: number;
  name: string;
  tag: string | null;
  /** The plant's other properties, kept as sent (the published NewPlant allows them). */
  extra: Record<string, unknown>;
  eventTime: string;
  topic: string;
  partition: number;
  offset: string;
  /** Plant Store deliveries the data went through before this event (LoopHeaders). */
  hops: number;
  /** The event that started the chain: this one's own id when it came straight from a sender. */
  originEventId: string;
  /** W3C trace context of the worker's span for this event: the parent of its deliveries' attempts. */
  traceparent: string | null;
  /** plantDigest of the plant: the same event id with another digest is a reused idempotency key. */
  digest: string;
}

/** A changed plant whose event had been through too many deliveries to be delivered again. */
export interface SuppressedEvent {
  eventId: string;
  plantId: number;
  hops: number;
  originEventId: string;
}

export interface ApplyResult {
  /** Ids of the events seen for the first time (the rest were duplicates). */
  fresh: Set<string>;
  /** Ids of the events whose plant was inserted or updated (fresh, newer than what is stored, and different). */
  applied: Set<string>;
  /** Ids of fresh events that were newer than the stored plant but carried the same data: nothing changed. */
  unchanged: Set<string>;
  /** Applied events not fanned out, because they had been through MAX_WEBHOOK_HOPS deliveries already. */
  suppressed: SuppressedEvent[];
  /**
   * Records (`partition:offset`) not stored because their event id had come before with another plant: a sender
   * reused an idempotency key for a different plant, on a gateway replica that had not seen it.
   */
  keyReused: string[];
  /** Events written to the outbox, each to fan out to its subscribers (none when no subscription is enabled). */
  outboxed: number;
  /** Of those, the ones not taken on by the caller (see IntakeOffer), for a fan-out to lease. */
  leftForFanOut: number;
  /** Delivery rows written to wait (behind an earlier one of their plant, or for a saturated subscriber). */
  deferred: number;
  /** The subscriptions those rows are for, each once. */
  deferredFor: string[];
  /**
   * The deliveries of the events the caller took on, to send from memory (their rows are not written yet), as
   * (event, subscriber) pairs: the caller builds them from the events in hand and its subscribers.
   */
  sending: { eventId: string; subscriptionId: string }[];
  /** The lease those events are held under. */
  lease: DeliveryLease;
  /**
   * Whether the caller's subscriptions (FanOutPlan.version) were the stored ones. If not, its copy is out of date
   * and must be reloaded: the deliveries to the subscriptions changed since were written as rows (none is sent from
   * the old copy), or, when the statement could not tell which changed, the events were left for a fan-out.
   */
  current: boolean;
}

/** A result with nothing in it, to add to (its sets are new each time). */
export const emptyApplyResult = (): ApplyResult => ({
  fresh: new Set(),
  applied: new Set(),
  unchanged: new Set(),
  keyReused: [],
  suppressed: [],
  outboxed: 0,
  leftForFanOut: 0,
  deferred: 0,
  deferredFor: [],
  sending: [],
  lease: { token: '', until: 0 },
  current: true,
});

/**
 * Adds what one statement stored to the total of a write made of several: the counts and ids, not what is per
 * statement (its deliveries to send, their lease, whether its subscriptions were current).
 */
export function addApplyResult(total: ApplyResult, r: ApplyResult): ApplyResult {
  r.fresh.forEach((id) => total.fresh.add(id));
  r.applied.forEach((id) => total.applied.add(id));
  r.unchanged.forEach((id) => total.unchanged.add(id));
  total.keyReused.push(...r.keyReused);
  total.suppressed.push(...r.suppressed);
  total.outboxed += r.outboxed;
  total.leftForFanOut += r.leftForFanOut;
  total.deferred += r.deferred;
  total.deferredFor = [...new Set([...total.deferredFor, ...r.deferredFor])];
  return total;
}

/**
 * How many deliveries the caller (the worker's dispatcher) can take on right away from the events it stores:
 * those events are written already leased to it, and their deliveries come back to send. Nobody else can see
 * them before the commit, so there is nothing to claim from anyone, and the fan-out statement is skipped.
 */
export interface IntakeOffer {
  limit: number;
  /** Subscriptions whose queue is full there: their deliveries are written as rows, for claims (by any replica). */
  skipSubscriptions: string[];
  leaseMs: number;
}

/** Take nothing on: every event written is left for a fan-out. */
export const NO_OFFER: IntakeOffer = { limit: 0, skipSubscriptions: [], leaseMs: 0 };
