// The enabled subscriptions as each worker holds them in memory, and the rules that need only them: which
// plants a subscriber receives (its filter) and the body every subscriber is sent. The worker fans a consumed
// batch out from these, so PostgreSQL no longer hands back a row per (event, subscriber) with the body and the
// credentials in it.
import { randomUUID } from 'node:crypto';
import { SubscriptionFilter } from '@app/contracts';
import { ClaimedDelivery, DeliveryLease, SendSettings, sendSettingsOf } from './delivery';
import { ApplyResult, IngestEvent } from './ingest';

/**
 * How often a worker reads the subscriptions' version (besides LISTEN/NOTIFY): a missed notification costs at
 * most this long.
 */
export const SUBSCRIBERS_POLL_MS = 250;
/**
 * A worker sends only while a read of the subscriptions' version sent within this window found its copy current.
 * A delete returns this long after its commit, so no replica can send to the deleted subscription afterwards,
 * whether or not it heard the notification (and a replica cut off from the database stops sending).
 */
export const SUBSCRIBERS_CONFIRM_WINDOW_MS = 1000;

/** An enabled subscription as the worker sends to it: credentials opened. */
export interface Subscriber extends SendSettings {
  id: string;
  /** The current signing secret, then a rotated-out one while `previousUntil` (ms since the epoch) lasts. */
  secret: string;
  previousSecret: string | null;
  previousUntil: number | null;
  filter: SubscriptionFilter;
  /** `plants` receive New Plant webhooks; `operational` ones only Plant Store's own events (never fanned out to). */
  kind: 'plants' | 'operational';
}

/** The enabled subscriptions at one version of them (see subscription_versions). */
export interface SubscriberSet {
  version: string;
  subscribers: Map<string, Subscriber>;
}

/** The subscriber's filter (SubscriptionFilter), as the SQL fragment matchesFilter applies it. */
export function receives(filter: SubscriptionFilter, plantId: number, tag: string | null): boolean {
  if (filter.tags && (tag === null || !filter.tags.includes(tag))) return false;
  const { min, max } = filter.plantIds ?? {};
  return (min === undefined || plantId >= min) && (max === undefined || plantId <= max);
}

/** The NewPlant a delivery carries: the plant's other properties, then its id, name and tag (if it has one). */
export function deliveryBody(e: Pick<IngestEvent, 'plantId' | 'name' | 'tag' | 'extra'>): string {
  return JSON.stringify({ ...e.extra, id: e.plantId, name: e.name, ...(e.tag !== null ? { tag: e.tag } : {}) });
}

/**
 * What a batch asks of the ingest statement: each event's body, and each (event, subscriber) pair the filters
 * let through, as of `version`. An event that has been through `maxHops` deliveries has none.
 */
export interface FanOutPlan {
  version: string;
  bodies: string[];
  pairs: { eventId: string; subscriptionId: string }[];
}

export function planFanOut(events: IngestEvent[], set: SubscriberSet, maxHops: number): FanOutPlan {
  const pairs: FanOutPlan['pairs'] = [];
  const subscribers = [...set.subscribers.values()].filter((s) => s.kind === 'plants');
  // An event id that comes twice in the batch (a sender's retry whose first publish was written after all, a record
  // fetched again) is one event, stored once: its pairs are asked for once, or the statement hands each back twice
  // and the subscriber is sent it twice.
  const first = firstRecords(events);
  for (const [i, e] of events.entries()) {
    if (first.get(e.eventId) !== i || e.hops >= maxHops) continue;
    for (const s of subscribers)
      if (receives(s.filter, e.plantId, e.tag)) pairs.push({ eventId: e.eventId, subscriptionId: s.id });
  }
  return { version: set.version, bodies: events.map(deliveryBody), pairs };
}

/** The signing secrets now: the current one first, and the previous one inside its overlap. */
export const signingSecrets = (s: Subscriber, now = Date.now()): string[] =>
  s.previousSecret !== null && s.previousUntil !== null && s.previousUntil > now
    ? [s.secret, s.previousSecret]
    : [s.secret];

/** A delivery of `event` to `s`, fanned out in memory under `lease` (its row is written with its first outcome). */
export const fannedOutDelivery = (
  event: IngestEvent,
  body: string,
  s: Subscriber,
  lease: DeliveryLease,
): ClaimedDelivery => ({
  id: randomUUID(),
  hasRow: false,
  subscriptionId: s.id,
  eventId: event.eventId,
  plantId: event.plantId,
  body,
  eventTime: new Date(event.eventTime),
  attempts: 0,
  ...sendSettingsOf(s),
  secrets: signingSecrets(s),
  backfillId: null,
  hops: event.hops,
  originEventId: event.originEventId,
  traceparent: event.traceparent,
  lease: { ...lease },
});

/**
 * The deliveries the ingest statement took on (its (event, subscriber) pairs), built from the events and the
 * subscribers they were planned with. A record redelivered within the batch is the same event: the first by
 * partition and offset is the one stored, as in APPLY_EVENTS.
 */
export function fannedOutDeliveries(
  events: IngestEvent[],
  plan: FanOutPlan,
  set: SubscriberSet,
  r: ApplyResult,
): ClaimedDelivery[] {
  if (r.sending.length === 0) return [];
  const first = firstRecords(events);
  return r.sending.map(({ eventId, subscriptionId }) => {
    const i = first.get(eventId)!;
    return fannedOutDelivery(events[i], plan.bodies[i], set.subscribers.get(subscriptionId)!, r.lease);
  });
}

/**
 * The index of each event id's first record in the batch by partition and offset: the one APPLY_EVENTS stores (a
 * record redelivered within the batch is the same event; one whose key was reused with another plant is not stored).
 */
function firstRecords(events: IngestEvent[]): Map<string, number> {
  const first = new Map<string, number>();
  events.forEach((e, i) => {
    const j = first.get(e.eventId);
    const earlier =
      j === undefined ||
      e.partition < events[j].partition ||
      (e.partition === events[j].partition && BigInt(e.offset) < BigInt(events[j].offset));
    if (earlier) first.set(e.eventId, i);
  });
  return first;
}
