import { Pool, PoolClient } from 'pg';
import { toStorableText } from '@app/contracts';
import { AttemptRecord, ClaimedDelivery, ClaimResult, FanOutResult, LeasedRef, Outbox } from '@app/delivery';
import { FAN_OUT, RECORD_FANNED_OUT } from './fan-out.sql';
import {
  attemptEntry,
  DELIVERY_SEND_COLUMNS,
  disableGone,
  noEarlierPending,
  SendRow,
  SUBSCRIPTION_SEND_COLUMNS,
  newLease,
  toClaimedDelivery,
} from './outbox.sql';
import { SecretBox } from '../secrets/secret-box';

// Claims due deliveries for this dispatcher with a lease (not a held lock), so a crashed worker's claims
// come back when the lease runs out. SKIP LOCKED lets replicas claim side by side. Per-plant order comes from
// noEarlierPending. The oldest due rows come from the partial index first and only they are checked for an
// earlier pending delivery, so a claim costs the same with a backlog of a million rows as with ten. (If more
// than 8x the batch of the oldest due rows were all waiting behind earlier ones, this claim takes fewer; the
// rest go out on later claims, as the earlier ones finish.)
// $1 limit, $2 subscriptions to leave out, $3 lease ms, $4 the lease's token.
export const CLAIM = `
WITH candidates AS MATERIALIZED (
  SELECT d.id, d.subscription_id, d.plant_id, d.seq, d.next_attempt_at FROM deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    AND (d.leased_until IS NULL OR d.leased_until < now())
    AND NOT (d.subscription_id = ANY($2::uuid[]))
  ORDER BY d.next_attempt_at
  LIMIT $1 * 8
), due AS (
  -- No ORDER BY: the candidates come oldest first and are checked one by one until the limit, not all of them
  -- then sorted (claim order is a preference; per-plant order is kept by noEarlierPending, not by this order).
  SELECT d.id FROM candidates c
  JOIN deliveries d ON d.id = c.id
  -- Again on the locked row: the candidates come from this statement's snapshot, and a replica may have leased
  -- (or finished) one since. FOR UPDATE re-evaluates these conditions on the row's newest version; without
  -- them two replicas claimed and sent the same delivery within milliseconds (found by the fault suite).
  WHERE d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = c.subscription_id AND s.enabled)
    AND ${noEarlierPending('c.subscription_id', 'c.plant_id', 'c.seq')}
  LIMIT $1
  FOR UPDATE OF d SKIP LOCKED
), claimed AS (
  UPDATE deliveries d SET leased_until = now() + $3 * interval '1 millisecond', lease_token = $4
  FROM due, subscriptions s
  WHERE d.id = due.id AND s.id = d.subscription_id
  RETURNING ${DELIVERY_SEND_COLUMNS('d')}, ${SUBSCRIPTION_SEND_COLUMNS}
)
-- Always one row at least: how many were due tells the dispatcher whether to claim again as slots free up.
-- (Deliveries of disabled subscriptions stay pending without being due, so they do not count.)
SELECT claimed.*, n.due FROM (
  SELECT count(*)::int AS due FROM candidates c JOIN subscriptions s ON s.id = c.subscription_id AND s.enabled
) n LEFT JOIN claimed ON true`;

/**
 * Records attempts of claimed rows. Only the claim that holds a row's lease (its token) records the outcome: the
 * row is locked first, so a claim taking it after its lease lapsed either waits for this statement or has changed
 * the token this one compares. An attempt sent under a lease that was lost meanwhile is only added to the log
 * (the receiver did get it), and counted: it changes neither the status nor the lease of the claim that holds it.
 */
const RECORD_ATTEMPTS = `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[],
                       $11::uuid[])
    AS t(delivery_id, attempted_at, status, latency_ms, error, response_body, next_status, delay_ms, disable_reason,
         signature, lease_token)
), owned AS MATERIALIZED (
  SELECT d.id FROM deliveries d JOIN r ON r.delivery_id = d.id
  WHERE d.lease_token = r.lease_token AND d.status = 'pending'
  ORDER BY d.id
  FOR UPDATE OF d
), updated AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, updated_at = now(),
         attempt_log = d.attempt_log || jsonb_build_array(${attemptEntry('r')}),
         status = CASE WHEN o.id IS NULL THEN d.status ELSE r.next_status END,
         next_attempt_at = CASE WHEN o.id IS NULL THEN d.next_attempt_at
                           ELSE now() + r.delay_ms * interval '1 millisecond' END,
         leased_until = CASE WHEN o.id IS NULL THEN d.leased_until END,
         lease_token = CASE WHEN o.id IS NULL THEN d.lease_token END
  FROM r LEFT JOIN owned o ON o.id = r.delivery_id
  WHERE d.id = r.delivery_id -- a delivery deleted meanwhile (subscription gone) is skipped
  RETURNING d.subscription_id, CASE WHEN o.id IS NOT NULL THEN r.disable_reason END AS disable_reason
), ${disableGone('updated')}`;

/**
 * Extends leases still held by the claim that took them: delivery rows by id, and the events of deliveries
 * fanned out from memory (their event's lease is theirs). $1 ids, $2 event ids, $3 tokens, $4 stored, $5 lease ms.
 */
const RENEW_LEASES = `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::boolean[]) AS t(id, event_id, lease_token, stored)
), renewed_rows AS (
  UPDATE deliveries d SET leased_until = now() + $5 * interval '1 millisecond'
  FROM r WHERE r.stored AND d.id = r.id AND d.lease_token = r.lease_token AND d.status = 'pending'
  RETURNING d.id
), renewed_events AS (
  UPDATE outbox_events e SET leased_until = now() + $5 * interval '1 millisecond'
  FROM (SELECT DISTINCT event_id, lease_token FROM r WHERE NOT r.stored) x
  WHERE e.event_id = x.event_id AND e.lease_token = x.lease_token AND e.fanned_out_at IS NULL
  RETURNING e.event_id
)
SELECT r.id FROM r
WHERE (r.stored AND r.id IN (SELECT id FROM renewed_rows))
   OR (NOT r.stored AND r.event_id IN (SELECT event_id FROM renewed_events))`;

/** The pool, or one of its connections inside a transaction. */
type Queryable = Pick<Pool | PoolClient, 'query'>;

/** The outbox as the worker's dispatcher uses it: claim, record, release. */
export class OutboxRepository implements Outbox {
  constructor(
    private readonly pool: Pool,
    private readonly box: SecretBox,
  ) {}

  /** Events to fan out, as deliveries to send from memory (see FAN_OUT). */
  async fanOut(limit: number, deferSubscriptions: string[], leaseMs: number): Promise<FanOutResult> {
    if (limit <= 0) return { claimed: [], more: true, deferred: 0 };
    const lease = newLease(leaseMs);
    const { rows } = await this.pool.query<
      SendRow & { due_events: number; events: number; deferred: number; subscription_id: string | null }
    >(FAN_OUT, [limit, deferSubscriptions, leaseMs, lease.token]);
    const claimed = rows.filter((r) => r.subscription_id !== null).map((r) => toClaimedDelivery(r, this.box, lease));
    return { claimed, more: rows[0].due_events > rows[0].events, deferred: rows[0].deferred };
  }

  async claimDue(limit: number, excludeSubscriptions: string[], leaseMs: number): Promise<ClaimResult> {
    if (limit <= 0) return { claimed: [], more: true };
    const lease = newLease(leaseMs);
    // Planned on every call, with the real limit: a generic plan could sort the whole backlog.
    const { rows } = await this.pool.query<SendRow & { due: number }>(CLAIM, [
      limit,
      excludeSubscriptions,
      leaseMs,
      lease.token,
    ]);
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
    const stored = records.filter((r) => r.delivery.stored);
    const fresh = records.filter((r) => !r.delivery.stored);
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
    // Named: parsed and planned once per connection, not once per batch.
    await db.query({
      name: 'record-attempts',
      text: RECORD_ATTEMPTS,
      values: [
        records.map((r) => r.delivery.id),
        ...attemptColumns(records),
        records.map((r) => r.delivery.lease.token),
      ],
    });
  }

  private async writeFannedOut(db: Queryable, records: AttemptRecord[]) {
    // One (event, subscriber) pair per delivery an event that completes here must have.
    const expected = records.flatMap((r) => (r.completes ?? []).map((s) => [r.delivery.eventId, s]));
    const col = <T>(f: (d: ClaimedDelivery) => T) => records.map((r) => f(r.delivery));
    const [attemptedAt, status, latencyMs, error, responseBody, nextStatus, delayMs, disable, signature] =
      attemptColumns(records);
    await db.query({
      name: 'record-fanned-out',
      text: RECORD_FANNED_OUT,
      values: [
        col((d) => d.id),
        col((d) => d.subscriptionId),
        col((d) => d.eventId),
        col((d) => d.plantId),
        col((d) => d.eventTime),
        col((d) => d.hops),
        col((d) => d.originEventId),
        col((d) => d.traceparent),
        attemptedAt,
        status,
        latencyMs,
        error,
        responseBody,
        signature,
        nextStatus,
        delayMs,
        disable,
        expected.map(([event]) => event),
        expected.map(([, subscription]) => subscription),
        col((d) => d.lease.token),
      ],
    });
  }

  async renewLeases(deliveries: ClaimedDelivery[], leaseMs: number): Promise<{ renewed: Set<string>; until: number }> {
    const until = Date.now() + leaseMs; // before the statement: the database's lease ends later, never earlier
    const col = <T>(f: (d: ClaimedDelivery) => T) => deliveries.map(f);
    const { rows } = await this.pool.query<{ id: string }>({
      name: 'renew-leases',
      text: RENEW_LEASES,
      values: [col((d) => d.id), col((d) => d.eventId), col((d) => d.lease.token), col((d) => d.stored), leaseMs],
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
        `UPDATE deliveries d SET leased_until = NULL, lease_token = NULL
         FROM unnest($1::uuid[], $2::uuid[]) AS r(id, lease_token)
         WHERE d.id = r.id AND d.lease_token = r.lease_token AND d.status = 'pending'`,
        [deliveries.map((d) => d.id), deliveries.map((d) => d.token)],
      );
    if (events.length > 0)
      await this.pool.query(
        `UPDATE outbox_events e SET leased_until = NULL, lease_token = NULL
         FROM unnest($1::text[], $2::uuid[]) AS r(event_id, lease_token)
         WHERE e.event_id = r.event_id AND e.lease_token = r.lease_token AND e.fanned_out_at IS NULL`,
        [events.map((e) => e.id), events.map((e) => e.token)],
      );
  }

  /** Pending delivery rows, and events not yet fanned out to their subscribers. */
  async countPending(): Promise<{ deliveries: number; events: number }> {
    const { rows } = await this.pool.query(
      `SELECT (SELECT count(*) FROM deliveries WHERE status = 'pending')::int AS deliveries,
              (SELECT count(*) FROM outbox_events WHERE fanned_out_at IS NULL)::int AS events`,
    );
    return rows[0];
  }
}

/**
 * The attempt's columns of RECORD_ATTEMPTS ($2..$10) and RECORD_FANNED_OUT. What the subscriber answered and the
 * error an attempt ended with are outside text: made storable (toStorableText), or one reply with a NUL in it
 * would be refused by PostgreSQL and fail its whole statement.
 */
function attemptColumns(records: AttemptRecord[]): unknown[][] {
  const storableText = (s: string | null | undefined) => (s == null ? null : toStorableText(s));
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  return [
    col((r) => r.attempt.attemptedAt),
    col((r) => r.attempt.status),
    col((r) => r.attempt.latencyMs),
    col((r) => storableText(r.attempt.error)),
    col((r) => storableText(r.attempt.responseBody)),
    col((r) => (r.outcome.kind === 'retry' ? 'pending' : r.outcome.kind)),
    col((r) => (r.outcome.kind === 'retry' ? r.outcome.delayMs : 0)),
    col((r) => (r.outcome.kind === 'failed' ? storableText(r.outcome.disableSubscription ?? null) : null)),
    col((r) => r.attempt.signature ?? null),
  ];
}
