import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { OperationalEventType, SubscriptionFilter } from '@app/contracts';
import {
  CircuitState,
  DeliveryDestination,
  DestinationSettings,
  Subscriber,
  SubscriberSet,
  SubscriberSource,
} from '@app/delivery';
import { SecretBox, secretHeaderContext, subscriptionContext } from '../secrets/secret-box';
import {
  LoadedSubscriber,
  openSecretHeaders,
  openSendCredentials,
  openSubscriber,
  SubscriptionSendRow,
} from '../sql/send-row';
import { sqlFile } from '../sql/sql-file';

export const SUBSCRIPTIONS_SQL = sqlFile(__dirname, 'subscriptions.sql');
const CREATE_SUBSCRIPTION = SUBSCRIPTIONS_SQL.statement('create-subscription');
const LIST_SUBSCRIPTIONS = SUBSCRIPTIONS_SQL.statement('list-subscriptions');
const FIND_SUBSCRIPTION = SUBSCRIPTIONS_SQL.statement('find-subscription');
const UPDATE_SUBSCRIPTION = SUBSCRIPTIONS_SQL.statement('update-subscription');
const DELETE_SUBSCRIPTION = SUBSCRIPTIONS_SQL.statement('delete-subscription');
const ROTATE_SECRET = SUBSCRIPTIONS_SQL.statement('rotate-secret');
const FIND_SENDABLE = SUBSCRIPTIONS_SQL.statement('find-sendable');
const LOAD_SUBSCRIBERS = SUBSCRIPTIONS_SQL.statement('load-subscribers');
const LOAD_CHANGED_SUBSCRIBERS = SUBSCRIPTIONS_SQL.statement('load-changed-subscribers');

/**
 * A row of `subscriptions`. `token`, `secret`, `previous_secret` and `secret_headers`' values are sealed (secrets/): this repository seals
 * what it writes; only the credential just made is handed back in the clear (`Issued`), and findSendable opens
 * a subscription's credentials for a test send to its own URL.
 */
export interface SubscriptionRow {
  id: string;
  url: string;
  token: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  signature: 'symmetric' | 'asymmetric';
  public_key: string | null;
  previous_public_key: string | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  /** An admin disabled it (migration 24): a portal link cannot enable it again. */
  disabled_by_operator: boolean;
  filter: SubscriptionFilter;
  /** plants: New Plant webhooks; operational: Plant Store's own events (those of event_types, null for all). */
  kind: SubscriptionKind;
  event_types: OperationalEventType[] | null;
  /** Custom headers sent with each delivery, name -> value. */
  headers: Record<string, string>;
  /** Secret ones, name -> sealed value (secretHeaderContext): never shown again. */
  secret_headers: Record<string, string>;
  /** A broker destination's settings (shown) and secrets (sealed JSON, never shown): migration 31. */
  destination: DestinationSettings;
  destination_secrets: string | null;
  created_at: Date;
  updated_at: Date;
  max_deliveries_per_second: number | null;
  max_concurrency: number | null;
  /** The subscriber asked (Retry-After) not to be sent anything before this. */
  paused_until: Date | null;
  circuit_state: CircuitState;
  circuit_since: Date | null;
  circuit_last_error: string | null;
  /** Open: when the next probe may go; half-open: when the probe's holder loses it. */
  circuit_probe_at: Date | null;
  consecutive_failures: number;
  failing_since: Date | null;
}

export interface NewSubscription {
  url: string;
  token: string | null;
  /** A `whsec_` secret, or a `whsk_` key whose `publicKey` goes beside it. */
  secret: string;
  signature: 'symmetric' | 'asymmetric';
  publicKey: string | null;
  description: string | null;
  filter: SubscriptionFilter;
  kind: SubscriptionKind;
  eventTypes: OperationalEventType[] | null;
  maxDeliveriesPerSecond: number | null;
  maxConcurrency: number | null;
  /** Custom headers: `secret` ones are sealed here. */
  headers: CustomHeaders;
  /** A broker destination's settings and secrets (the URL's user and password): the secrets are sealed here. */
  destination: DeliveryDestination;
}

/** A subscription's custom headers, values in the clear (see libs/delivery's custom-headers). */
export interface CustomHeaders {
  plain: Record<string, string>;
  secret: Record<string, string>;
}

export type SubscriptionKind = 'plants' | 'operational';

/** A row, and the signing secret just created or rotated, in the clear: shown once to the operator. */
export interface Issued {
  row: SubscriptionRow;
  secret: string;
}

/** A partial change; `token: null` removes the token, an absent key leaves the column as it is. */
export interface SubscriptionChange {
  url?: string;
  token?: string | null;
  enabled?: boolean;
  description?: string;
  filter?: SubscriptionFilter;
  /** null: every type. */
  eventTypes?: OperationalEventType[] | null;
  /** null removes the limit. */
  maxDeliveriesPerSecond?: number | null;
  maxConcurrency?: number | null;
  /** All of them as they are to be: the ones not given are removed. */
  headers?: CustomHeaders;
  /** Made through a portal link: its disable is not the operator's, and it cannot enable what the operator disabled. */
  byPortal?: boolean;
  /** The URL `headers` and `token` were decided for: when it is no longer the subscription's, nothing changes. */
  credentialsFor?: string;
  /** Written whole when given (a new URL brings its own: credentials never stay behind for another address). */
  destination?: DeliveryDestination;
}

/** What a test send needs, credentials opened: they go to the subscriber's URL and nowhere else. */
export interface SendableSubscription {
  id: string;
  url: string;
  token: string | null;
  /** The current secret first, then a rotated-out one still inside its overlap. */
  secrets: string[];
  kind: SubscriptionKind;
  eventTypes: OperationalEventType[] | null;
  headers: Record<string, string>;
  secretHeaders: Record<string, string>;
  destination?: DeliveryDestination;
}

/** Disabling keeps (or sets) a reason; enabling clears it. */
const DISABLED_BY_ADMIN = 'disabled by an admin';
const DISABLED_BY_PORTAL = 'disabled through its portal link';

export class SubscriptionRepository implements SubscriberSource {
  constructor(
    private readonly pool: Pool,
    private readonly box: SecretBox,
  ) {}

  private seal(value: string, id: string): string {
    return this.box.seal(value, subscriptionContext(id));
  }

  private sealHeaders(secret: Record<string, string>, id: string): Record<string, string> {
    return Object.fromEntries(
      Object.entries(secret).map(([n, v]) => [n, this.box.seal(v, secretHeaderContext(id, n))]),
    );
  }

  private sealDestination(d: DeliveryDestination, id: string): string | null {
    return Object.keys(d.secrets).length === 0 ? null : this.seal(JSON.stringify(d.secrets), id);
  }

  /** A row's custom headers, secret ones opened: for a change to be checked and written whole (never shown). */
  headersOf(row: SubscriptionRow): CustomHeaders {
    return { plain: row.headers, secret: openSecretHeaders(row.secret_headers, row.id, this.box) };
  }

  async create(s: NewSubscription): Promise<Issued> {
    const id = randomUUID(); // chosen here: the sealed values are bound to it
    const { rows } = await this.pool.query<SubscriptionRow>(
      CREATE_SUBSCRIPTION.text,
      CREATE_SUBSCRIPTION.values({
        id,
        url: s.url,
        token: s.token === null ? null : this.seal(s.token, id),
        secret: this.seal(s.secret, id),
        signature: s.signature,
        publicKey: s.publicKey,
        description: s.description,
        filter: JSON.stringify(s.filter),
        kind: s.kind,
        eventTypes: s.eventTypes,
        maxDeliveriesPerSecond: s.maxDeliveriesPerSecond,
        maxConcurrency: s.maxConcurrency,
        headers: JSON.stringify(s.headers.plain),
        secretHeaders: JSON.stringify(this.sealHeaders(s.headers.secret, id)),
        destination: JSON.stringify(s.destination.settings),
        destinationSecrets: this.sealDestination(s.destination, id),
      }),
    );
    return { row: rows[0], secret: s.secret };
  }

  async list(): Promise<SubscriptionRow[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(LIST_SUBSCRIPTIONS.text);
    return rows;
  }

  async findById(id: string): Promise<SubscriptionRow | null> {
    const { rows } = await this.pool.query<SubscriptionRow>(FIND_SUBSCRIPTION.text, FIND_SUBSCRIPTION.values({ id }));
    return rows[0] ?? null;
  }

  /**
   * Null when there is no such subscription, a portal link would enable one the operator disabled, or its URL is no
   * longer `credentialsFor`.
   */
  async update(id: string, change: SubscriptionChange): Promise<SubscriptionRow | null> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      UPDATE_SUBSCRIPTION.text,
      UPDATE_SUBSCRIPTION.values({
        id,
        url: change.url ?? null,
        tokenChanges: 'token' in change,
        token: change.token ? this.seal(change.token, id) : null,
        enabled: change.enabled ?? null,
        description: change.description ?? null,
        disabledReason: change.byPortal ? DISABLED_BY_PORTAL : DISABLED_BY_ADMIN,
        filter: change.filter === undefined ? null : JSON.stringify(change.filter),
        eventTypesChange: 'eventTypes' in change,
        eventTypes: change.eventTypes ?? null,
        rateChanges: change.maxDeliveriesPerSecond !== undefined,
        maxDeliveriesPerSecond: change.maxDeliveriesPerSecond ?? null,
        concurrencyChanges: change.maxConcurrency !== undefined,
        maxConcurrency: change.maxConcurrency ?? null,
        headers: change.headers === undefined ? null : JSON.stringify(change.headers.plain),
        secretHeaders:
          change.headers === undefined ? null : JSON.stringify(this.sealHeaders(change.headers.secret, id)),
        byPortal: change.byPortal ?? false,
        credentialsFor: change.credentialsFor ?? null,
        destinationChanges: change.destination !== undefined,
        destination: JSON.stringify(change.destination?.settings ?? {}),
        destinationSecrets: change.destination ? this.sealDestination(change.destination, id) : null,
      }),
    );
    return rows[0] ?? null;
  }

  /**
   * Marks it deleted and keeps its deliveries as evidence (retention removes them, then the row). It stops
   * receiving at once: disabled, its token and old secret dropped, its pending deliveries closed as failed.
   */
  async delete(id: string): Promise<boolean> {
    const { rows } = await this.pool.query(DELETE_SUBSCRIPTION.text, DELETE_SUBSCRIPTION.values({ id }));
    return rows.length > 0;
  }

  /** The old secret (or key pair) keeps signing next to the new one until `overlapMs` from now. */
  async rotateSecret(
    id: string,
    newSecret: string,
    publicKey: string | null,
    overlapMs: number,
  ): Promise<Issued | null> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      ROTATE_SECRET.text,
      ROTATE_SECRET.values({ id, secret: this.seal(newSecret, id), overlapMs, publicKey }),
    );
    return rows[0] ? { row: rows[0], secret: newSecret } : null;
  }

  /** The same columns and signing rule as a delivery (subscription_send_settings, migration 35), credentials opened. */
  async findSendable(id: string): Promise<SendableSubscription | null> {
    const { rows } = await this.pool.query<SubscriptionSendRow & Pick<SubscriptionRow, 'kind' | 'event_types'>>(
      FIND_SENDABLE.text,
      FIND_SENDABLE.values({ id }),
    );
    const r = rows[0];
    if (!r) return null;
    return { id, ...openSendCredentials(r, id, this.box), kind: r.kind, eventTypes: r.event_types };
  }

  /** The enabled subscriptions, credentials opened, at the version read in the same snapshot (LOAD_SUBSCRIBERS). */
  async load(): Promise<SubscriberSet> {
    const { rows } = await this.pool.query<{ version: string; subscribers: LoadedSubscriber[] }>({
      name: LOAD_SUBSCRIBERS.name,
      text: LOAD_SUBSCRIBERS.text,
    });
    const subscribers = new Map<string, Subscriber>();
    for (const r of rows[0].subscribers) subscribers.set(r.id, openSubscriber(r, this.box));
    return { version: rows[0].version, subscribers };
  }

  /**
   * `set` brought to the version now by reading only the subscriptions changed since its version (only their
   * credentials are opened), or null when the change log no longer holds every version since (load them all).
   */
  async loadChanges(set: SubscriberSet): Promise<SubscriberSet | null> {
    const { rows } = await this.pool.query<{
      version: string;
      complete: boolean;
      changed: string[] | null;
      subscribers: LoadedSubscriber[] | null;
    }>({
      name: LOAD_CHANGED_SUBSCRIBERS.name,
      text: LOAD_CHANGED_SUBSCRIBERS.text,
      values: LOAD_CHANGED_SUBSCRIBERS.values({ version: set.version }),
    });
    const r = rows[0];
    if (!r?.complete) return null;
    const subscribers = new Map(set.subscribers);
    for (const id of r.changed ?? []) subscribers.delete(id);
    for (const loaded of r.subscribers ?? []) subscribers.set(loaded.id, openSubscriber(loaded, this.box));
    return { version: r.version, subscribers };
  }
}
