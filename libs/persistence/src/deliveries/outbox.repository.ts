import { Pool, PoolClient } from 'pg';
import { toStorableText } from '@app/contracts';
import { AttemptRecord, ClaimedDelivery, ClaimResult, FanOutResult, LeasedRef, Outbox } from '@app/delivery';
import { newLease, SendRow, toClaimedDelivery } from '../sql/send-row';
import { SecretBox } from '../secrets/secret-box';
import { sqlFile } from '../sql/sql-file';

export const CLAIMS_SQL = sqlFile(__dirname, 'claims.sql');
const CLAIM = CLAIMS_SQL.statement('claim');
const RENEW_LEASES = CLAIMS_SQL.statement('renew-leases');
const RELEASE_DELIVERY_LEASES = CLAIMS_SQL.statement('release-delivery-leases');
const RELEASE_EVENT_LEASES = CLAIMS_SQL.statement('release-event-leases');
const COUNT_PENDING = CLAIMS_SQL.statement('count-pending');
const RECORD_ATTEMPTS = CLAIMS_SQL.statement('record-attempts');
export const FAN_OUT_SQL = sqlFile(__dirname, 'fan-out.sql');
const FAN_OUT = FAN_OUT_SQL.statement('fan-out');
const RECORD_FANNED_OUT = FAN_OUT_SQL.statement('record-fanned-out');
const RECORD_SUCCEEDED = FAN_OUT_SQL.statement('record-succeeded');

/** The pool, or one of its connections inside a transaction. */
type Queryable = Pick<Pool | PoolClient, 'query'>;

/** The outbox as the worker's dispatcher uses it: claim, record, release. */
export class OutboxRepository implements Outbox {
  constructor(
    private readonly pool: Pool,
    private readonly box: SecretBox,
  ) {}

  /** Events to fan out, as deliveries to send from memory (see fan-out.sql). */
  async fanOut(limit: number, deferSubscriptions: string[], leaseMs: number): Promise<FanOutResult> {
    if (limit <= 0) return { claimed: [], more: true, deferred: 0, deferredFor: [] };
    const lease = newLease(leaseMs);
    const { rows } = await this.pool.query<
      SendRow & {
        due_events: number;
        events: number;
        deferred: number;
        deferred_for: string[];
        subscription_id: string | null;
      }
    >(FAN_OUT.text, FAN_OUT.values({ room: limit, deferSubscriptions, leaseMs, leaseToken: lease.token }));
    const claimed = rows.filter((r) => r.subscription_id !== null).map((r) => toClaimedDelivery(r, this.box, lease));
    const { due_events, events, deferred, deferred_for } = rows[0];
    return { claimed, more: due_events > events, deferred, deferredFor: deferred_for };
  }

  async claimDue(limit: number, excludeSubscriptions: string[], leaseMs: number): Promise<ClaimResult> {
    if (limit <= 0) return { claimed: [], more: true };
    const lease = newLease(leaseMs);
    // Unnamed: planned on every call, with the real limit (see claims.sql).
    const { rows } = await this.pool.query<SendRow & { due: number }>(
      CLAIM.text,
      CLAIM.values({ limit, skipSubscriptions: excludeSubscriptions, leaseMs, leaseToken: lease.token }),
    );
    const claimed = rows.filter((r) => r.id !== null).map((r) => toClaimedDelivery(r, this.box, lease));
    return { claimed, more: rows[0].due > claimed.length };
  }

  /**
   * Attempts and their consequences (next attempt, final status, a disabled subscription), many in one
   * statement per kind, so the dispatcher pays a round trip per batch rather than one per send: a claimed
   * delivery's row is updated; a delivery fanned out from memory is written for the first time, and its event
   * marked fanned out once all of its deliveries are (AttemptRecord.completes).
   */
  async record(records: AttemptRecord[]): Promise<void> {
    const stored = records.filter((r) => r.delivery.hasRow);
    const fresh = records.filter((r) => !r.delivery.hasRow);
    if (fresh.length === 0) return this.updateStored(this.pool, stored);
    if (stored.length === 0) return this.writeFannedOut(this.pool, fresh);
    // Both kinds: one transaction, all or nothing, so that a batch refused for one row's data can be split and
    // written again (WriteCoalescer) without recording any attempt twice.
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await this.updateStored(client, stored);
      await this.writeFannedOut(client, fresh);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  private async updateStored(db: Queryable, records: AttemptRecord[]) {
    if (records.length === 0) return;
    if (records.some((r) => r.attempt === null))
      throw new Error('a claimed delivery not attempted is handed back, not recorded');
    // Named: parsed and planned once per connection, not once per batch.
    await db.query({
      name: RECORD_ATTEMPTS.name,
      text: RECORD_ATTEMPTS.text,
      values: RECORD_ATTEMPTS.values({
        ids: records.map((r) => r.delivery.id),
        ...attemptColumns(records),
        leaseTokens: records.map((r) => r.delivery.lease.token),
      }),
    });
  }

  private async writeFannedOut(db: Queryable, records: AttemptRecord[]) {
    // One (event, subscriber) pair per delivery an event that completes here must have.
    const expected = records.flatMap((r) => (r.completes ?? []).map((s) => [r.delivery.eventId, s]));
    const col = <T>(f: (d: ClaimedDelivery) => T) => records.map((r) => f(r.delivery));
    const { nextStatus, delayMs, disableReason, ...attempt } = attemptColumns(records);
    const delivery = {
      subscriptionIds: col((d) => d.subscriptionId),
      eventIds: col((d) => d.eventId),
      plantIds: col((d) => d.plantId),
      eventTimes: col((d) => d.eventTime),
      hops: col((d) => d.hops),
      originEventIds: col((d) => d.originEventId),
      traceparents: col((d) => d.traceparent),
      leaseTokens: col((d) => d.lease.token),
      expectedEventIds: expected.map(([event]) => event),
      expectedSubscriptionIds: expected.map(([, subscription]) => subscription),
    };
    if (records.every((r) => r.attempt !== null && r.outcome.kind === 'succeeded')) {
      // The common case, and the cheap statement; it writes nothing unless it can write the whole batch.
      // Unnamed: planned on every call, with the batch's size and the tables as they are now (see RECORD_SUCCEEDED).
      const { rows } = await db.query<{ clear: boolean }>(
        RECORD_SUCCEEDED.text,
        RECORD_SUCCEEDED.values({ ...delivery, ...attempt }),
      );
      if (rows[0].clear) return;
    }
    // Unnamed: planned on every call, with the batch's size and the tables as they are now. A plan cached while
    // `deliveries` was small (a new database, or a healthy one: successes go to the log) probed it by a scan per
    // record once it had grown (retries pile up there exactly when a subscriber fails): tens of ms per batch.
    await db.query({
      text: RECORD_FANNED_OUT.text,
      values: RECORD_FANNED_OUT.values({
        ids: col((d) => d.id),
        ...delivery,
        ...attempt,
        nextStatus,
        delayMs,
        disableReason,
      }),
    });
  }

  async renewLeases(deliveries: ClaimedDelivery[], leaseMs: number): Promise<{ renewed: Set<string>; until: number }> {
    const until = Date.now() + leaseMs; // before the statement: the database's lease ends later, never earlier
    const col = <T>(f: (d: ClaimedDelivery) => T) => deliveries.map(f);
    const { rows } = await this.pool.query<{ id: string }>({
      name: RENEW_LEASES.name,
      text: RENEW_LEASES.text,
      values: RENEW_LEASES.values({
        ids: col((d) => d.id),
        eventIds: col((d) => d.eventId),
        leaseTokens: col((d) => d.lease.token),
        hasRow: col((d) => d.hasRow),
        leaseMs,
      }),
    });
    return { renewed: new Set(rows.map((r) => r.id)), until };
  }

  /**
   * Hands leased but unsent work back at once, rather than when its lease expires: claimed deliveries by id, and
   * events whose fan-out is not all written (the next fan-out leaves out what was); each only while the claim
   * that took it holds it still.
   */
  async releaseLeases(deliveries: LeasedRef[], events: LeasedRef[] = []): Promise<void> {
    if (deliveries.length > 0)
      await this.pool.query(
        RELEASE_DELIVERY_LEASES.text,
        RELEASE_DELIVERY_LEASES.values({
          ids: deliveries.map((d) => d.id),
          leaseTokens: deliveries.map((d) => d.token),
        }),
      );
    if (events.length > 0)
      await this.pool.query(
        RELEASE_EVENT_LEASES.text,
        RELEASE_EVENT_LEASES.values({ eventIds: events.map((e) => e.id), leaseTokens: events.map((e) => e.token) }),
      );
  }

  /** Pending delivery rows, and events not yet fanned out to their subscribers. */
  async countPending(): Promise<{ deliveries: number; events: number }> {
    const { rows } = await this.pool.query(COUNT_PENDING.text);
    return rows[0];
  }
}

/**
 * The attempt's columns of record-attempts and record-fanned-out, by parameter name. What the subscriber answered
 * and the error an attempt ended with are outside text: made storable (toStorableText), or one reply with a NUL in
 * it would be refused by PostgreSQL and fail its whole statement.
 */
function attemptColumns(records: AttemptRecord[]) {
  const storableText = (s: string | null | undefined) => (s == null ? null : toStorableText(s));
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  return {
    attemptedAt: col((r) => r.attempt?.attemptedAt ?? null),
    httpStatus: col((r) => r.attempt?.status ?? null),
    latencyMs: col((r) => r.attempt?.latencyMs ?? 0),
    error: col((r) => storableText(r.attempt?.error)),
    responseBody: col((r) => storableText(r.attempt?.responseBody)),
    nextStatus: col((r) => (r.outcome.kind === 'retry' ? 'pending' : r.outcome.kind)),
    delayMs: col((r) => (r.outcome.kind === 'retry' ? r.outcome.delayMs : 0)),
    disableReason: col((r) =>
      r.outcome.kind === 'failed' ? storableText(r.outcome.disableSubscription ?? null) : null,
    ),
    signature: col((r) => r.attempt?.signature ?? null),
  };
}
