// What the worker needs from storage, declared here and implemented in libs/persistence (as Convoy's
// datastore/repository.go declares and database/postgres implements), so the rules read without the SQL.
import { AttemptRecord, ClaimResult, FanOutResult } from './delivery';
import { ApplyResult, IngestEvent, OutboxLease } from './ingest';

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
   * events fanned out (see AttemptRecord.completes).
   */
  record(records: AttemptRecord[]): Promise<void>;
  /** Hands leased but unsent deliveries (by id) and events (by id) back at once, rather than when leases expire. */
  releaseLeases(deliveryIds: string[], eventIds?: string[]): Promise<void>;
  countPending(): Promise<{ deliveries: number; events: number }>;
}
