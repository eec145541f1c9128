-- Claims: due delivery rows leased to a dispatcher, the leases renewed and handed back. A lease, not a held lock,
-- so a crashed worker's claims come back when the lease runs out; SKIP LOCKED lets replicas claim side by side.

-- @name claim
-- Claims due deliveries for this dispatcher. Per-plant order: a candidate goes only while it is the earliest
-- pending delivery of its subscriber and plant (lowest seq); a backfill's and a replay's currency are
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
--
-- Past the candidates, every read of deliveries is one scan driven by an array of keys, never a lookup per
-- candidate nor a join to the table: whatever the statistics say, each costs one pass at worst. (Statistics taken
-- while the table was empty, as after a queue drains, make every index on it cost the same to the planner: a
-- lookup per candidate then scanned a partial index whole, and a join per row of the table ran a claim for
-- minutes; test/database/stale-statistics.)
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
  -- Each subscriber's oldest due rows, taken in turns (each one's oldest, then each one's second...): one
  -- subscriber's backlog of rows that wait behind a retry cannot fill the window and hold everyone's back.
  SELECT c.* FROM sendable, LATERAL (
    SELECT o.*, row_number() OVER (ORDER BY o.next_attempt_at) AS turn FROM (
      SELECT d.id, d.subscription_id, d.plant_id, d.seq, d.next_attempt_at, d.replayed_from IS NOT NULL AS replayed
      FROM deliveries d
      WHERE d.subscription_id = sendable.id AND d.status = 'pending' AND d.next_attempt_at <= now()
        AND (d.leased_until IS NULL OR d.leased_until < now())
      ORDER BY d.next_attempt_at
      LIMIT :limit * 8
    ) o
  ) c
  ORDER BY c.turn, c.next_attempt_at
  LIMIT :limit * 8
), heads AS (
  -- The earliest pending delivery of each subscriber and plant among the candidates' (pending_deliveries,
  -- migration 36), found for all of them in one scan. Only those may go; one that is not a candidate (not due
  -- yet, or leased) is asked again by the lock below, and one whose retry came due is found here through the rows
  -- that wait behind it, however many they are. A delivery with no plant (an operational event) waits for none.
  SELECT ARRAY(SELECT DISTINCT ON (p.subscription_id, p.plant_id) p.id FROM pending_deliveries p
               WHERE p.subscription_id = ANY (ARRAY(SELECT DISTINCT subscription_id FROM candidates))
                 AND p.plant_id = ANY (ARRAY(SELECT DISTINCT plant_id FROM candidates))
               ORDER BY p.subscription_id, p.plant_id, p.seq)
         || ARRAY(SELECT c.id FROM candidates c WHERE c.plant_id IS NULL) AS ids
), due AS (
  -- Locked by key alone, oldest due first, and checked on the locked row: the candidates come from this statement's
  -- snapshot, and a replica may have leased (or finished) one since; FOR UPDATE re-evaluates the conditions in
  -- its query on the row's newest version, and returns that version to the conditions outside it (without them two
  -- replicas claimed and sent the same delivery within milliseconds, found by the fault suite). Its status is asked
  -- outside (OFFSET 0 keeps it there): inside, it let the planner scan a partial index whole for the keys. The
  -- LIMIT outside stops the locking once enough are taken.
  SELECT l.id FROM (
    SELECT d.id, d.status FROM heads, delivery_currency d
    WHERE d.id = ANY (heads.ids) AND d.next_attempt_at <= now()
      AND (d.leased_until IS NULL OR d.leased_until < now()) AND d.backfill_current AND d.replay_current
    ORDER BY d.next_attempt_at
    OFFSET 0
    FOR UPDATE OF d SKIP LOCKED
  ) l
  WHERE l.status = 'pending'
  LIMIT :limit
), superseded AS (
  -- Replays that must not go (a newer version of the plant reached the subscriber): back to what they were,
  -- unsent, or they would hold back the plant's later deliveries. Disjoint from due (replay_current is false).
  UPDATE deliveries d SET status = d.replayed_from, replayed_from = NULL, leased_until = NULL, updated_at = now()
  WHERE d.id = ANY (ARRAY(
    SELECT x.id FROM delivery_currency x
    WHERE EXISTS (SELECT 1 FROM candidates WHERE replayed) -- asked once: no scan at all when none is a replay
      AND x.id = ANY (ARRAY(SELECT id FROM candidates WHERE replayed))
      AND x.replayed_from IS NOT NULL AND x.status = 'pending'
      AND (x.leased_until IS NULL OR x.leased_until < now()) AND NOT x.replay_current
    FOR UPDATE OF x SKIP LOCKED))
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
