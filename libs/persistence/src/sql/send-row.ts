// The rows that SUBSCRIPTION_SEND_COLUMNS and DELIVERY_SEND_COLUMNS (./fragments/outbox.ts) read, as the
// dispatcher, a test send and each worker's copy of its subscribers take them: credentials opened.
import { randomUUID } from 'node:crypto';
import { SubscriptionFilter } from '@app/contracts';
import {
  ClaimedDelivery,
  DeliveryDestination,
  DeliveryLease,
  DestinationSecrets,
  DestinationSettings,
  SendSettings,
  Subscriber,
} from '@app/delivery';
import { SecretBox, secretHeaderContext, subscriptionContext } from '../secrets/secret-box';

/**
 * The columns of subscription_send_settings (migration 35) besides its key and the secret signing now: what a
 * subscription's deliveries are sent with (SendSettings in libs/delivery, sealed). The claim, the fan-out, a test
 * send and each worker's copy of its subscribers read that one view, so a column added there reaches every way a
 * delivery leaves; test/database/migrations checks that this list is the view's.
 */
export const SUBSCRIPTION_SEND_FIELDS = [
  'url',
  'token',
  'secret',
  'max_deliveries_per_second',
  'max_concurrency',
  'headers',
  'secret_headers',
  'destination',
  'destination_secrets',
] as const;

/** A delivery as the claim and the fan-out hand it out: the delivery's columns and its subscription_send_settings. */
export interface SendRow {
  id: string | null;
  subscription_id: string;
  event_id: string;
  plant_id: number | string;
  body: string;
  event_time: Date | string;
  attempts: number;
  url: string;
  token: string | null;
  secret: string;
  previous_secret: string | null;
  max_deliveries_per_second: number | null;
  max_concurrency: number | null;
  headers: Record<string, string>;
  /** name -> sealed value */
  secret_headers: Record<string, string>;
  /** A broker destination's settings (jsonb) and its secrets, sealed JSON (migration 31). */
  destination: DestinationSettings | null;
  destination_secrets: string | null;
  /** Only CLAIM reads it (a backfill's deliveries are rows); absent elsewhere. */
  backfill_id?: string | null;
  hops: number | null;
  origin_event_id: string | null;
  traceparent: string | null;
}

/** The subscription's side (subscription_send_settings): its SUBSCRIPTION_SEND_FIELDS and the secret signing now. */
export type SubscriptionSendRow = Pick<SendRow, (typeof SUBSCRIPTION_SEND_FIELDS)[number] | 'previous_secret'>;

/** A row of load-subscribers' list (worker_subscribers): the same fields, credentials sealed, and the previous secret with its end. */
export type LoadedSubscriber = SubscriptionSendRow & {
  id: string;
  previous_until: string | null;
  filter: SubscriptionFilter;
  kind: Subscriber['kind'];
};

/** The send settings of a subscription's row, credentials opened (the signing secrets apart: see below). */
export const openSendSettings = (r: SubscriptionSendRow, subscriptionId: string, box: SecretBox): SendSettings => ({
  url: r.url,
  limits: { maxDeliveriesPerSecond: r.max_deliveries_per_second, maxConcurrency: r.max_concurrency },
  token: box.openOptional(r.token, subscriptionContext(subscriptionId)),
  headers: r.headers ?? {},
  secretHeaders: openSecretHeaders(r.secret_headers ?? {}, subscriptionId, box),
  ...optional('destination', openDestination(r, subscriptionId, box)),
});

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };

/**
 * A subscription's credentials opened to send with (they are stored sealed, see secrets/): its send settings and
 * the secrets that sign, current first (the statement kept the previous one only inside its overlap).
 */
export function openSendCredentials(r: SubscriptionSendRow, subscriptionId: string, box: SecretBox) {
  const context = subscriptionContext(subscriptionId);
  return {
    ...openSendSettings(r, subscriptionId, box),
    secrets: [r.secret, r.previous_secret].filter((x): x is string => Boolean(x)).map((x) => box.open(x, context)),
  };
}

/** A worker's copy of a subscriber, credentials opened: the previous secret kept with its end, to sign until then. */
export function openSubscriber(r: LoadedSubscriber, box: SecretBox): Subscriber {
  const context = subscriptionContext(r.id);
  const previous = r.previous_secret && r.previous_until ? r.previous_secret : null;
  return {
    id: r.id,
    ...openSendSettings(r, r.id, box),
    secret: box.open(r.secret, context),
    previousSecret: previous ? box.open(previous, context) : null,
    previousUntil: previous ? Date.parse(r.previous_until!) : null,
    filter: r.filter,
    kind: r.kind,
  };
}

/** A broker destination's settings and secrets opened; undefined for an HTTP receiver with neither. */
export function openDestination(
  r: Pick<SendRow, 'destination' | 'destination_secrets'>,
  subscriptionId: string,
  box: SecretBox,
): DeliveryDestination | undefined {
  const settings = r.destination ?? {};
  if (!r.destination_secrets && Object.keys(settings).length === 0) return undefined;
  const secrets = r.destination_secrets
    ? (JSON.parse(box.open(r.destination_secrets, subscriptionContext(subscriptionId))) as DestinationSecrets)
    : {};
  return { settings, secrets };
}

/** A subscription's secret headers, opened (each is sealed bound to its subscription and its name). */
export const openSecretHeaders = (sealed: Record<string, string>, subscriptionId: string, box: SecretBox) =>
  Object.fromEntries(
    Object.entries(sealed).map(([name, value]) => [name, box.open(value, secretHeaderContext(subscriptionId, name))]),
  );

/** The row as the dispatcher sends it, under `lease`: credentials opened. `id` null: fanned out, no row written yet. */
export const toClaimedDelivery = (r: SendRow, box: SecretBox, lease: DeliveryLease): ClaimedDelivery => ({
  id: r.id ?? randomUUID(),
  hasRow: r.id !== null,
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  plantId: Number(r.plant_id),
  body: r.body,
  eventTime: new Date(r.event_time),
  attempts: r.attempts,
  ...openSendCredentials(r, r.subscription_id, box),
  hops: r.hops ?? 0,
  originEventId: r.origin_event_id ?? r.event_id,
  traceparent: r.traceparent,
  backfillId: r.backfill_id ?? null,
  lease: { ...lease }, // its own: renewing one delivery's lease says nothing of another's
});

/**
 * A new claim's lease: a token of its own and, by this process's clock, the latest it can end: `leaseMs` from now,
 * before the statement that takes it is sent (the database's now() is later).
 */
export const newLease = (leaseMs: number): DeliveryLease => ({ token: randomUUID(), until: Date.now() + leaseMs });
