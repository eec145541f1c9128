// What the worker needs from storage, declared here and implemented in libs/persistence (as Convoy's
// datastore/repository.go declares and database/postgres implements), so the rules read without the SQL. The
// worker injects them by token (DatabaseModule binds each to its repository), and its unit tests' fakes are
// checked against them.
import { AttemptRecord, ClaimedDelivery, ClaimResult, FanOutResult, LeasedRef } from './delivery';
import type { OperationalEventData, OperationalEventType } from '@app/contracts';
import { ApplyResult, IngestEvent, IntakeOffer } from './ingest';
import { BreakerPolicy, HealthTransition, OutcomeSummary, SubscriberGate } from '../flow-control';
import { FanOutPlan, SubscriberSet } from './subscribers';

/** Injection tokens for the ports below (an interface is gone at run time): `@Inject(OUTBOX) outbox: Outbox`. */
export const PLANT_EVENT_STORE = Symbol('PlantEventStore');
export const OUTBOX = Symbol('Outbox');
export const SUBSCRIBER_HEALTH = Symbol('SubscriberHealth');
export const SUBSCRIBER_SOURCE = Symbol('SubscriberSource');

/** Stores a batch of events, each changed plant's with an outbox row that owes its deliveries, in one transaction. */
export interface PlantEventStore {
  /**
   * `lease`: how much of the new events' fan-out the caller takes on now; `maxHops`: events that have been
   * through this many deliveries are stored but not delivered again; `plan`: the events' bodies and who receives
   * each, as the caller's subscriptions say (used only while their version is the stored one).
   */
  applyEvents(events: IngestEvent[], lease: IntakeOffer, maxHops: number, plan: FanOutPlan): Promise<ApplyResult>;
}

/** The enabled subscriptions with their credentials opened, and their version, for a worker to keep in memory. */
export interface SubscriberSource {
  /** The enabled subscriptions at the version they were read at (one snapshot). */
  load(): Promise<SubscriberSet>;
  /** `set` brought up to date by reading only what changed since its version; null: load them all instead. */
  loadChanges(set: SubscriberSet): Promise<SubscriberSet | null>;
}

/** The deliveries waiting to be sent, shared by every worker replica through leases. */
export interface Outbox {
  /**
   * Leases events and fans them out: about `limit` deliveries to send from memory; those that must wait (an
   * earlier one of their plant pending for the subscriber, or one of `deferSubscriptions`) are written as rows.
   */
  fanOut(limit: number, deferSubscriptions: string[], leaseMs: number): Promise<FanOutResult>;
  /** Leases up to `limit` due deliveries, none of `excludeSubscriptions`, none behind an earlier one for its plant. */
  claimDue(limit: number, excludeSubscriptions: string[], leaseMs: number): Promise<ClaimResult>;
  /**
   * Records attempts and their consequences (next attempt, final status, a disabled subscription), and marks
   * events fanned out (see AttemptRecord.completes): each only while its lease is still the one it was sent
   * under. An attempt sent under a lease that lapsed and was taken by another claim is only added to the
   * delivery's attempt log, if its row is written; its outcome overwrites nothing.
   */
  record(records: AttemptRecord[]): Promise<void>;
  /**
   * Extends the leases the deliveries are held under to `leaseMs` from now, where their claim still holds them:
   * the ids of those renewed, and when their leases end now (by this process's clock).
   */
  renewLeases(deliveries: ClaimedDelivery[], leaseMs: number): Promise<{ renewed: Set<string>; until: number }>;
  /**
   * Hands leased but unsent delivery rows and events back at once, rather than when their leases expire, each only
   * if its claim still holds it.
   */
  releaseLeases(deliveries: LeasedRef[], events?: LeasedRef[]): Promise<void>;
  countPending(): Promise<{ deliveries: number; events: number }>;
}

export const OPERATIONAL_EVENTS = Symbol('OperationalEvents');

/** A connection inside the caller's transaction (a pg PoolClient), so an event commits with the change it reports. */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/**
 * Plant Store's own events to operational subscriptions (`kind: operational`): one call, one INSERT, writing a
 * pending delivery per operational subscriber that receives the type (none when there is none); the dispatcher
 * sends, signs, retries and records them like any delivery. Statements that already change the state in SQL emit
 * there instead, with the SQL function operational_deliveries (libs/persistence, migration 34).
 */
export interface OperationalEvents {
  /**
   * `about`: the subscription the event concerns (it is not told about itself), else null. `db`: the caller's
   * transaction, else the pool. Returns how many deliveries were written.
   */
  emit<T extends OperationalEventType>(
    type: T,
    data: OperationalEventData[T],
    about?: string | null,
    db?: SqlClient,
  ): Promise<number>;
}

/**
 * What every worker replica shares about its subscribers' health and limits. Each state change (a transition) is
 * made by one method here, written to the subscription's row with an audit event in the same statement, and
 * returned, so whatever reacts to it (the dispatcher now, operational webhooks later) has one place to look.
 */
export interface SubscriberHealth {
  /**
   * This replica is alive (seen within `liveMs`): the live replicas' ids, sorted, and every subscriber that is
   * limited, paused, failing or not closed.
   */
  heartbeat(replicaId: string, liveMs: number): Promise<{ replicas: string[]; gates: SubscriberGate[] }>;
  /** This replica stops: the others take its share at their next heartbeat. */
  leave(replicaId: string): Promise<void>;
  /**
   * Counts consecutive failures, and makes the transitions they call for: a closed circuit opens after
   * `failuresToOpen`, a failed probe reopens it with a longer wait, a success closes it, and a subscriber failing
   * for `disableAfterMs` is disabled.
   */
  recordOutcomes(outcomes: OutcomeSummary[], policy: BreakerPolicy): Promise<HealthTransition[]>;
  /** The subscriber asked for a pause (Retry-After): none of its deliveries go for `forMs`. Null if unknown. */
  pause(subscriptionId: string, forMs: number, reason: string): Promise<HealthTransition | null>;
  /**
   * Takes the probe of an open circuit whose wait is over (or whose probe's holder has not answered within
   * `holdMs`): true for the one replica that got it; the circuit is half-open meanwhile.
   */
  startProbe(subscriptionId: string, holdMs: number): Promise<boolean>;
}
