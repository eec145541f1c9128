// What the worker needs from storage, declared here and implemented in libs/persistence (as Convoy's
// datastore/repository.go declares and database/postgres implements), so the rules read without the SQL.
import { AttemptRecord, ClaimResult } from './delivery';
import { ApplyResult, IngestEvent, OutboxLease } from './ingest';

/** Stores a batch of events and writes the deliveries they owe, in one transaction. */
export interface PlantEventStore {
  /** `maxHops`: events that have been through this many deliveries are stored but not delivered again. */
  applyEvents(events: IngestEvent[], lease: OutboxLease, maxHops: number): Promise<ApplyResult>;
}

/** The deliveries waiting to be sent, shared by every worker replica through leases. */
export interface Outbox {
  /** Leases up to `limit` due deliveries, none of `excludeSubscriptions`, none behind an earlier one for its plant. */
  claimDue(limit: number, excludeSubscriptions: string[], leaseMs: number): Promise<ClaimResult>;
  /** Records attempts and their consequences (next attempt, final status, a disabled subscription). */
  recordAttempts(records: AttemptRecord[]): Promise<void>;
  /** Hands leased but unsent deliveries back at once, rather than when their lease expires. */
  releaseLeases(ids: string[]): Promise<void>;
  countPending(): Promise<number>;
}
