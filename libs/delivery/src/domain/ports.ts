// What the worker needs from storage, declared here and implemented in libs/persistence (as Convoy's
// datastore/repository.go declares and database/postgres implements), so the rules read without the SQL. The
// worker injects them by token (DatabaseModule binds each to its repository), and its unit tests' fakes are
// checked against them.
import { AttemptRecord, ClaimedDelivery, ClaimResult, FanOutResult, LeasedRef } from './delivery';
import type { OperationalEventData, OperationalEventType } from '@app/contracts';
import { ApplyResult, IngestEvent, OutboxLease } from './ingest';

/** Injection tokens for the ports below (an interface is gone at run time): `@Inject(OUTBOX) outbox: Outbox`. */
export const PLANT_EVENT_STORE = Symbol('PlantEventStore');
export const OUTBOX = Symbol('Outbox');

/** Stores a batch of events, each changed plant's with an outbox row that owes its deliveries, in one transaction. */
export interface PlantEventStore {
  /**
   * `lease`: how much of the new events' fan-out the caller takes on now; `maxHops`: events that have been
   * through this many deliveries are stored but not delivered again.
   */
  applyEvents(events: IngestEvent[], lease: OutboxLease, maxHops: number): Promise<ApplyResult>;
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
 * there instead, with the `operationalEvents` fragment of libs/persistence (sql/fragments/operational.ts).
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
