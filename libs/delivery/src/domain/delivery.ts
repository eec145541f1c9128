// The delivery domain: a New Plant webhook owed to one subscriber, the attempts made to send it, and what
// each attempt means for it. Persistence stores these (libs/persistence/src/deliveries); the worker sends them.

import type { DeliveryDestination } from '../destinations/destination';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One HTTP attempt, as recorded in the delivery's attempt log and listed by the admin API. */
export interface DeliveryAttempt {
  attemptedAt: string;
  status: number | null;
  latencyMs: number;
  error: string | null;
  responseBody: string | null;
  /** The `webhook-signature` it was sent with (null when it was refused before signing); not a credential. */
  signature?: string | null;
}

/** A delivery leased to this worker, with everything needed to send it. */
/**
 * What a subscription's deliveries are sent with, credentials opened. A claimed row, a delivery fanned out from the
 * worker's copy of its subscriber and a test send all carry these, read from the same columns
 * (SUBSCRIPTION_SEND_FIELDS in libs/persistence): a setting added here reaches every way a delivery leaves.
 */
export interface SendSettings {
  url: string;
  /** Its subscriber's own limits as last read (see SubscriberGates). */
  limits: { maxDeliveriesPerSecond: number | null; maxConcurrency: number | null };
  token: string | null;
  /** The subscription's custom headers, sent with it; secret ones opened (never logged nor shown). */
  headers: Record<string, string>;
  secretHeaders: Record<string, string>;
  /** A broker destination's or an authenticated receiver's settings and credentials; absent for a plain URL. */
  destination?: DeliveryDestination;
}

/** A copy of the send settings alone, from anything that carries them (a Subscriber, a ClaimedDelivery). */
export const sendSettingsOf = (s: SendSettings): SendSettings => ({
  url: s.url,
  limits: { ...s.limits },
  token: s.token,
  headers: s.headers,
  secretHeaders: s.secretHeaders,
  ...(s.destination ? { destination: s.destination } : {}),
});

export interface ClaimedDelivery extends SendSettings {
  id: string;
  /**
   * Whether its row is written: claimed from the outbox's delivery rows. False when it was fanned out from its
   * event in memory; its row is written once, with the outcome of its first attempt (under the event's lease).
   */
  hasRow: boolean;
  subscriptionId: string;
  eventId: string;
  plantId: number;
  body: string;
  eventTime: Date;
  attempts: number;
  /** The current signing secret first, then a rotated-out one still inside its overlap. */
  secrets: string[];
  /** Set on a delivery of a backfill (the current state of its plant, asked for by the subscriber). */
  backfillId?: string | null;
  /** Sent as LoopHeaders: this delivery is hop `hops + 1` of the chain started by `originEventId`. */
  hops: number;
  originEventId: string;
  /** The event's trace (see IngestEvent.traceparent): each attempt is a span in it. */
  traceparent: string | null;
  /** The lease it is held under: its row's, or its event's when it was fanned out from memory. */
  lease: DeliveryLease;
}

/**
 * A lease as its holder knows it. `token` names the claim that took it: what is done under the lease (an outcome
 * recorded, the lease renewed or handed back) is done only while that claim still holds it, so a worker whose
 * lease lapsed cannot overwrite what the lease's new holder did. `until`: when it lapses at the latest, by this
 * process's clock (read before the claim was sent, so never later than the database's own end of the lease).
 */
export interface DeliveryLease {
  token: string;
  until: number;
}

/** A delivery row (`id`) or an outbox event (its event id) leased under `token`, to hand back. */
export interface LeasedRef {
  id: string;
  token: string;
}

export interface ClaimResult {
  claimed: ClaimedDelivery[];
  /** Due deliveries this claim left (waiting behind an earlier one for their plant, or beyond the limit). */
  more: boolean;
}

/** What an attempt means for its delivery (see decideOutcome). */
export type AttemptOutcome =
  { kind: 'succeeded' } | { kind: 'retry'; delayMs: number } | { kind: 'failed'; disableSubscription?: string };

/** A fan-out: deliveries to send from memory, and how many of the event's had to be written to wait instead. */
export interface FanOutResult extends ClaimResult {
  deferred: number;
  /** The subscriptions those rows are for, each once. */
  deferredFor: string[];
}

export interface AttemptRecord {
  delivery: ClaimedDelivery;
  /**
   * Null: not attempted. A delivery fanned out from memory whose subscriber's gate shut before it was sent (paused,
   * circuit open) is written as a pending row this way, its attempts untouched, to wait for the claims. Only for
   * deliveries without a row (a claimed row is handed back instead).
   */
  attempt: DeliveryAttempt | null;
  outcome: AttemptOutcome;
  /**
   * On the last of an event's deliveries from memory to be answered: the subscribers of all of them. The event
   * is marked fanned out by the same statement if each of them has its row by then.
   */
  completes?: string[];
}
