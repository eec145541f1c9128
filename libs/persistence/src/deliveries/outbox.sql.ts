import { statement } from '../sql/statement';
import {
  deliveryExhaustedEvents,
  exhaustedNotices,
  operationalEvents,
  subscriptionDisabledEvents,
} from '../sql/fragments/operational';
import {
  appendAttempts,
  attemptEntry,
  backfillCurrent,
  DELIVERY_SEND_COLUMNS,
  disableGone,
  noEarlierPending,
  replayCurrent,
  SUBSCRIPTION_SEND_COLUMNS,
} from '../sql/fragments/outbox';

// Claims due deliveries for this dispatcher with a lease (not a held lock), so a crashed worker's claims
// come back when the lease runs out. SKIP LOCKED lets replicas claim side by side. Per-plant order comes from
// noEarlierPending.
//
// The claim visits subscribers, not rows: first the subscribers with pending rows (a loose scan of the partial
// index, one probe per subscriber), then only the enabled ones this replica may send to now (not saturated,
// paused or circuit-open here: $2), and from each of those its oldest due rows (the index by subscriber and due
// time). So the rows of a disabled, deleted, paused or circuit-open subscriber are never read, whatever put them
// there (a 410, the auto-disable, a portal link's PATCH, a replay or recover, a backfill): another subscriber's
// retry goes out on its schedule, and a claim's cost grows with the number of subscribers waiting, never with the
// size of another's backlog. (If more than 8x the batch of the oldest due rows all wait behind earlier ones, this
// claim takes fewer; the rest go out on later claims, as the earlier ones finish.) A replayed delivery whose
// plant has moved on is not claimed but put back as it was (replayCurrent), so that it holds back nothing.
export const CLAIM = statement({
  name: 'claim',
  runBy: 'OutboxRepository.claimDue',
  params: [
    'how many deliveries to claim at most',
    'subscriptions to leave out (saturated here)',
    'the lease, ms',
    "the lease's token",
  ],
  text: `
WITH RECURSIVE waiting AS (
  (SELECT d.subscription_id FROM deliveries d WHERE d.status = 'pending' ORDER BY d.subscription_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.subscription_id FROM deliveries d
          WHERE d.status = 'pending' AND d.subscription_id > w.subscription_id
          ORDER BY d.subscription_id LIMIT 1)
  FROM waiting w WHERE w.subscription_id IS NOT NULL
), sendable AS (
  SELECT s.id FROM waiting w JOIN subscriptions s ON s.id = w.subscription_id
  WHERE s.enabled AND NOT (s.id = ANY($2::uuid[]))
), candidates AS MATERIALIZED (
  SELECT c.* FROM sendable, LATERAL (
    SELECT d.id, d.subscription_id, d.plant_id, d.seq, d.next_attempt_at FROM deliveries d
    WHERE d.subscription_id = sendable.id AND d.status = 'pending' AND d.next_attempt_at <= now()
      AND (d.leased_until IS NULL OR d.leased_until < now())
    ORDER BY d.next_attempt_at
    LIMIT $1 * 8
  ) c
  ORDER BY c.next_attempt_at
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
    AND ${noEarlierPending('c.subscription_id', 'c.plant_id', 'c.seq')}
    AND ${backfillCurrent('d')}
    AND ${replayCurrent('d')}
  LIMIT $1
  FOR UPDATE OF d SKIP LOCKED
), superseded AS (
  -- Replays that must not go (a newer version of the plant reached the subscriber): back to what they were,
  -- unsent, or they would hold back the plant's later deliveries. Disjoint from due (replayCurrent is false).
  UPDATE deliveries d SET status = d.replayed_from, replayed_from = NULL, leased_until = NULL, updated_at = now()
  WHERE d.id IN (
    SELECT x.id FROM candidates c JOIN deliveries x ON x.id = c.id
    WHERE x.replayed_from IS NOT NULL AND x.status = 'pending' AND (x.leased_until IS NULL OR x.leased_until < now())
      AND NOT ${replayCurrent('x')}
    FOR UPDATE OF x SKIP LOCKED)
  RETURNING 1
), claimed AS (
  UPDATE deliveries d SET leased_until = now() + $3 * interval '1 millisecond', lease_token = $4
  FROM due, subscriptions s
  WHERE d.id = due.id AND s.id = d.subscription_id
  RETURNING ${DELIVERY_SEND_COLUMNS('d')}, ${SUBSCRIPTION_SEND_COLUMNS}
)
-- Always one row at least: how many were due tells the dispatcher whether to claim again as slots free up.
-- (Deliveries of disabled subscriptions stay pending without being due: they are not candidates.)
-- In plant-id order: a subscriber's claimed deliveries queue in this order (a backfill's go out by plant id).
SELECT claimed.*, n.due FROM (SELECT count(*)::int AS due FROM candidates) n LEFT JOIN claimed ON true
ORDER BY claimed.plant_id`,
});

/**
 * Records attempts of claimed rows. Only the claim that holds a row's lease (its token) records the outcome: the
 * row is locked first, so a claim taking it after its lease lapsed either waits for this statement or has changed
 * the token this one compares. An attempt sent under a lease that was lost meanwhile is only added to the log
 * (the receiver did get it), and counted: it changes neither the status nor the lease of the claim that holds it.
 */
export const RECORD_ATTEMPTS = statement({
  name: 'record-attempts',
  runBy: 'OutboxRepository.record',
  params: [
    "the claimed deliveries' ids",
    "the attempts' times (attemptedAt)",
    'the HTTP statuses they got (null: no answer)',
    'their latencies, ms',
    'the errors they ended with (storable text)',
    'what the subscribers answered (storable text)',
    'the next status: pending (a retry), succeeded or failed',
    'the delay before a retry, ms (0 otherwise)',
    'why to disable the subscription (410 Gone), or null',
    'the signatures sent',
    "the claims' lease tokens",
  ],
  text: `
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
         attempt_log = ${appendAttempts('d.attempt_log', `jsonb_build_array(${attemptEntry('r')})`)},
         status = CASE WHEN o.id IS NULL THEN d.status ELSE r.next_status END,
         next_attempt_at = CASE WHEN o.id IS NULL THEN d.next_attempt_at
                           ELSE now() + r.delay_ms * interval '1 millisecond' END,
         leased_until = CASE WHEN o.id IS NULL THEN d.leased_until END,
         lease_token = CASE WHEN o.id IS NULL THEN d.lease_token END
  FROM r LEFT JOIN owned o ON o.id = r.delivery_id
  WHERE d.id = r.delivery_id -- a delivery deleted meanwhile (subscription gone) is skipped
  RETURNING d.id AS delivery_id, d.subscription_id, d.event_id, d.plant_id, d.attempts, r.attempted_at,
            r.status AS http_status, r.error, CASE WHEN o.id IS NOT NULL THEN r.disable_reason END AS disable_reason,
            o.id IS NOT NULL AND r.next_status = 'failed' AND d.event_type IS NULL AS exhausted
), ${disableGone('updated')},
${exhaustedNotices('(SELECT * FROM updated WHERE exhausted)')},
${operationalEvents(`${subscriptionDisabledEvents('disabled')} UNION ALL ${deliveryExhaustedEvents()}`)}
SELECT (SELECT count(*) FROM op_deliveries)::int AS operational`,
});

/**
 * Extends leases still held by the claim that took them: delivery rows by id, and the events of deliveries
 * fanned out from memory (their event's lease is theirs).
 */
export const RENEW_LEASES = statement({
  name: 'renew-leases',
  runBy: 'OutboxRepository.renewLeases',
  params: [
    "the deliveries' ids",
    "their events' ids",
    'their lease tokens',
    'whether each has its row (else its event holds the lease)',
    'the new lease, ms',
  ],
  text: `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::boolean[]) AS t(id, event_id, lease_token, has_row)
), renewed_rows AS (
  UPDATE deliveries d SET leased_until = now() + $5 * interval '1 millisecond'
  FROM r WHERE r.has_row AND d.id = r.id AND d.lease_token = r.lease_token AND d.status = 'pending'
  RETURNING d.id
), renewed_events AS (
  UPDATE outbox_events e SET leased_until = now() + $5 * interval '1 millisecond'
  FROM (SELECT DISTINCT event_id, lease_token FROM r WHERE NOT r.has_row) x
  WHERE e.event_id = x.event_id AND e.lease_token = x.lease_token AND e.fanned_out_at IS NULL
  RETURNING e.event_id
)
SELECT r.id FROM r
WHERE (r.has_row AND r.id IN (SELECT id FROM renewed_rows))
   OR (NOT r.has_row AND r.event_id IN (SELECT event_id FROM renewed_events))`,
});

/** Hands claimed deliveries back while the claim that took them holds them still. */
export const RELEASE_DELIVERY_LEASES = statement({
  name: 'release-delivery-leases',
  runBy: 'OutboxRepository.releaseLeases',
  params: ["the claimed deliveries' ids", 'their lease tokens'],
  text: `UPDATE deliveries d SET leased_until = NULL, lease_token = NULL
         FROM unnest($1::uuid[], $2::uuid[]) AS r(id, lease_token)
         WHERE d.id = r.id AND d.lease_token = r.lease_token AND d.status = 'pending'`,
});

/** Hands leased events back (fan-out not all written) while the lease that took them holds them still. */
export const RELEASE_EVENT_LEASES = statement({
  name: 'release-event-leases',
  runBy: 'OutboxRepository.releaseLeases',
  params: ["the leased events' ids", 'their lease tokens'],
  text: `UPDATE outbox_events e SET leased_until = NULL, lease_token = NULL
         FROM unnest($1::text[], $2::uuid[]) AS r(event_id, lease_token)
         WHERE e.event_id = r.event_id AND e.lease_token = r.lease_token AND e.fanned_out_at IS NULL`,
});

/** Pending delivery rows, and events not yet fanned out. */
export const COUNT_PENDING = statement({
  name: 'count-pending',
  runBy: 'OutboxRepository.countPending',
  params: [],
  text: `SELECT (SELECT count(*) FROM deliveries WHERE status = 'pending')::int AS deliveries,
              (SELECT count(*) FROM outbox_events WHERE fanned_out_at IS NULL)::int AS events`,
});
