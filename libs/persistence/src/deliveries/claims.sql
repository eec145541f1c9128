-- Claims: due delivery rows leased to a dispatcher, the leases renewed and handed back. A lease, not a held lock,
-- so a crashed worker's claims come back when the lease runs out; SKIP LOCKED lets replicas claim side by side.

-- @name claim
-- Claims due deliveries for this dispatcher. Per-plant order: a candidate waits while an earlier delivery of its
-- subscriber and plant is pending (pending_deliveries, migration 36); a backfill's and a replay's currency are
-- delivery_currency's (migration 36), asked of each row once it is locked.
--
-- The claim visits subscribers, not rows: first the subscribers with pending rows (a loose scan of the partial
-- index, one probe per subscriber), then only the enabled ones this replica may send to now (not saturated,
-- paused or circuit-open here: :skipSubscriptions), and from each of those its oldest due rows (the index by
-- subscriber and due time). So the rows of a disabled, deleted, paused or circuit-open subscriber are never read,
-- whatever put them there (a 410, the auto-disable, a portal link's PATCH, a replay or recover, a backfill):
-- another subscriber's retry goes out on its schedule, and a claim's cost grows with the number of subscribers
-- waiting, never with the size of another's backlog. (If more than 8x the batch of the oldest due rows all wait
-- behind earlier ones, this claim takes fewer; the rest go out on later claims, as the earlier ones finish.) A
-- replayed delivery whose plant has moved on is not claimed but put back as it was, so that it holds back
-- nothing. Sent unnamed by OutboxRepository.claimDue: planned with the real limit (a generic plan could sort the
-- whole backlog).
-- :limit how many deliveries to claim at most
-- :skipSubscriptions subscriptions to leave out (saturated here)
-- :leaseMs the lease, ms
-- :leaseToken the lease's token
WITH RECURSIVE waiting AS (
  (SELECT d.subscription_id FROM deliveries d WHERE d.status = 'pending' ORDER BY d.subscription_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.subscription_id FROM deliveries d
          WHERE d.status = 'pending' AND d.subscription_id > w.subscription_id
          ORDER BY d.subscription_id LIMIT 1)
  FROM waiting w WHERE w.subscription_id IS NOT NULL
), sendable AS (
  SELECT s.id FROM waiting w JOIN subscriptions s ON s.id = w.subscription_id
  WHERE s.enabled AND NOT (s.id = ANY(:skipSubscriptions::uuid[]))
), candidates AS MATERIALIZED (
  SELECT c.* FROM sendable, LATERAL (
    SELECT d.id, d.subscription_id, d.plant_id, d.seq, d.next_attempt_at FROM deliveries d
    WHERE d.subscription_id = sendable.id AND d.status = 'pending' AND d.next_attempt_at <= now()
      AND (d.leased_until IS NULL OR d.leased_until < now())
    ORDER BY d.next_attempt_at
    LIMIT :limit * 8
  ) c
  ORDER BY c.next_attempt_at
  LIMIT :limit * 8
), due AS (
  -- Driven by the candidates, oldest first, each looked up by its key and locked in a sub-SELECT of its own (one
  -- with FOR UPDATE is never flattened into the join): whatever the statistics say (a backlog that grew since the
  -- last ANALYZE), a claim reads its candidates' rows and never the table's other pending rows. Joined the other
  -- way round, a planner that took pending rows for few scanned every one of them on each claim, another
  -- subscriber's backlog included (bench:noisy-neighbour: 2,300 rows read by claims that took none). The order
  -- rule is asked of each candidate, never of every row of the table. The conditions are asked again of the locked
  -- row: the candidates come from this statement's snapshot, and a replica may have leased (or finished) one
  -- since; FOR UPDATE re-evaluates them on the row's newest version (without them two replicas claimed and sent
  -- the same delivery within milliseconds, found by the fault suite).
  -- No ORDER BY: the candidates come oldest first and are checked one by one until the limit, not all of them
  -- then sorted (claim order is a preference; per-plant order is kept by the NOT EXISTS, not by this order).
  SELECT l.id FROM candidates c, LATERAL (
    SELECT d.id FROM delivery_currency d
    WHERE d.id = c.id AND d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
      AND NOT EXISTS (SELECT 1 FROM pending_deliveries earlier
                      WHERE earlier.subscription_id = c.subscription_id AND earlier.plant_id = c.plant_id
                        AND earlier.seq < c.seq)
      AND d.backfill_current AND d.replay_current
    FOR UPDATE OF d SKIP LOCKED
  ) l
  LIMIT :limit
), superseded AS (
  -- Replays that must not go (a newer version of the plant reached the subscriber): back to what they were,
  -- unsent, or they would hold back the plant's later deliveries. Disjoint from due (replay_current is false).
  -- Looked up by candidate, as in due.
  UPDATE deliveries d SET status = d.replayed_from, replayed_from = NULL, leased_until = NULL, updated_at = now()
  WHERE d.id IN (
    SELECT l.id FROM candidates c, LATERAL (
      SELECT x.id FROM delivery_currency x
      WHERE x.id = c.id AND x.replayed_from IS NOT NULL AND x.status = 'pending'
        AND (x.leased_until IS NULL OR x.leased_until < now()) AND NOT x.replay_current
      FOR UPDATE OF x SKIP LOCKED
    ) l)
  RETURNING 1
), claimed AS (
  -- The delivery's side, by an array of keys as in superseded: joined to its subscription here, the planner could
  -- walk each subscription's rows, a skipped one's backlog included, to find the few claimed.
  UPDATE deliveries d SET leased_until = now() + :leaseMs * interval '1 millisecond', lease_token = :leaseToken
  WHERE d.id = ANY (ARRAY(SELECT id FROM due))
  RETURNING d.id, d.event_id, d.plant_id, d.body, d.event_time, d.attempts, d.hops, d.origin_event_id, d.traceparent,
            d.backfill_id, d.subscription_id AS claimed_for
)
-- Always one row at least: how many were due tells the dispatcher whether to claim again as slots free up.
-- (Deliveries of disabled subscriptions stay pending without being due: they are not candidates.)
-- With what each subscription's deliveries are sent with (subscription_send_settings), by its key.
-- In plant-id order: a subscriber's claimed deliveries queue in this order (a backfill's go out by plant id).
SELECT claimed.id, claimed.event_id, claimed.plant_id, claimed.body, claimed.event_time, claimed.attempts,
       claimed.hops, claimed.origin_event_id, claimed.traceparent, claimed.backfill_id, s.*, n.due
FROM (SELECT count(*)::int AS due FROM candidates) n
LEFT JOIN claimed ON true
LEFT JOIN subscription_send_settings s ON s.subscription_id = claimed.claimed_for
ORDER BY claimed.plant_id;

-- @name renew-leases
-- Extends leases still held by the claim that took them: delivery rows by id, and the events of deliveries
-- fanned out from memory (their event's lease is theirs). Sent by OutboxRepository.renewLeases.
-- :ids the deliveries' ids
-- :eventIds their events' ids
-- :leaseTokens their lease tokens
-- :hasRow whether each has its row (else its event holds the lease)
-- :leaseMs the new lease, ms
WITH r AS (
  SELECT * FROM unnest(:ids::uuid[], :eventIds::text[], :leaseTokens::uuid[], :hasRow::boolean[])
    AS t(id, event_id, lease_token, has_row)
), renewed_rows AS (
  UPDATE deliveries d SET leased_until = now() + :leaseMs * interval '1 millisecond'
  FROM r WHERE r.has_row AND d.id = r.id AND d.lease_token = r.lease_token AND d.status = 'pending'
  RETURNING d.id
), renewed_events AS (
  UPDATE outbox_events e SET leased_until = now() + :leaseMs * interval '1 millisecond'
  FROM (SELECT DISTINCT event_id, lease_token FROM r WHERE NOT r.has_row) x
  WHERE e.event_id = x.event_id AND e.lease_token = x.lease_token AND e.fanned_out_at IS NULL
  RETURNING e.event_id
)
SELECT r.id FROM r
WHERE (r.has_row AND r.id IN (SELECT id FROM renewed_rows))
   OR (NOT r.has_row AND r.event_id IN (SELECT event_id FROM renewed_events));

-- @name release-delivery-leases
-- Hands claimed deliveries back while the claim that took them holds them still. Sent by
-- OutboxRepository.releaseLeases.
-- :ids the claimed deliveries' ids
-- :leaseTokens their lease tokens
UPDATE deliveries d SET leased_until = NULL, lease_token = NULL
FROM unnest(:ids::uuid[], :leaseTokens::uuid[]) AS r(id, lease_token)
WHERE d.id = r.id AND d.lease_token = r.lease_token AND d.status = 'pending';

-- @name release-event-leases
-- Hands leased events back (fan-out not all written) while the lease that took them holds them still. Sent by
-- OutboxRepository.releaseLeases.
-- :eventIds the leased events' ids
-- :leaseTokens their lease tokens
UPDATE outbox_events e SET leased_until = NULL, lease_token = NULL
FROM unnest(:eventIds::text[], :leaseTokens::uuid[]) AS r(event_id, lease_token)
WHERE e.event_id = r.event_id AND e.lease_token = r.lease_token AND e.fanned_out_at IS NULL;

-- @name count-pending
-- Pending delivery rows, and events not yet fanned out. Sent by OutboxRepository.countPending.
SELECT (SELECT count(*) FROM pending_deliveries)::int AS deliveries,
       (SELECT count(*) FROM pending_events)::int AS events;

-- @name record-attempts
-- Records attempts of claimed rows. Only the claim that holds a row's lease (its token) records the outcome: the
-- row is locked first, so a claim taking it after its lease lapsed either waits for this statement or has changed
-- the token this one compares. An attempt sent under a lease that was lost meanwhile is only added to the log
-- (the receiver did get it), and counted: it changes neither the status nor the lease of the claim that holds it.
-- What follows a delivery's end (a 410, an exhausted delivery) is settle_final_outcomes' (migration 37). Sent
-- named by OutboxRepository.record: parsed and planned once per connection, not once per batch.
-- :ids the claimed deliveries' ids
-- :attemptedAt the attempts' times (attemptedAt)
-- :httpStatus the HTTP statuses they got (null: no answer)
-- :latencyMs their latencies, ms
-- :error the errors they ended with (storable text)
-- :responseBody what the subscribers answered (storable text)
-- :nextStatus the next status: pending (a retry), succeeded or failed
-- :delayMs the delay before a retry, ms (0 otherwise)
-- :disableReason why to disable the subscription (410 Gone), or null
-- :signature the signatures sent
-- :leaseTokens the claims' lease tokens
WITH r AS (
  SELECT * FROM unnest(:ids::uuid[], :attemptedAt::timestamptz[], :httpStatus::int[], :latencyMs::int[],
                       :error::text[], :responseBody::text[], :nextStatus::text[], :delayMs::bigint[],
                       :disableReason::text[], :signature::text[], :leaseTokens::uuid[])
    AS t(delivery_id, attempted_at, status, latency_ms, error, response_body, next_status, delay_ms, disable_reason,
         signature, lease_token)
), owned AS MATERIALIZED (
  SELECT d.id FROM deliveries d JOIN r ON r.delivery_id = d.id
  WHERE d.lease_token = r.lease_token AND d.status = 'pending'
  ORDER BY d.id
  FOR UPDATE OF d
), updated AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, updated_at = now(),
         attempt_log = append_attempts(d.attempt_log, jsonb_build_array(
           attempt_entry(r.attempted_at, r.status, r.latency_ms, r.error, r.response_body, r.signature))),
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
)
SELECT settle_final_outcomes(
         ARRAY(SELECT ROW(u.subscription_id, u.disable_reason)::gone_subscription FROM updated u
               WHERE u.disable_reason IS NOT NULL),
         ARRAY(SELECT ROW(u.delivery_id, u.subscription_id, u.event_id, u.plant_id, u.attempts, u.attempted_at,
                          u.http_status, u.error)::exhausted_delivery FROM updated u WHERE u.exhausted)
       ) AS operational;
