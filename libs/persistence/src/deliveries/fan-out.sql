-- The fan-out: outbox events leased to a dispatcher and fanned out to their subscribers, to send from memory, and
-- the records of what was sent. No delivery row is written for a delivery that can go at once: its record is
-- written with its outcome (a success appended to delivery_log, anything else a row of deliveries).

-- @name fan-out
-- Leases outbox events to this dispatcher and fans them out to their subscribers (plant_subscribers, migration
-- 37), for it to send from memory. A delivery that must wait, behind an earlier pending one of its plant for that
-- subscriber (pending_deliveries, migration 36) or for a subscriber saturated here, is written as a pending row
-- now, for the claims to send in order. Events come oldest first, never behind an earlier event of their plant
-- still being fanned out (pending_events), and as many as fit the room given if each goes to every subscriber
-- (one at least). Never more deliveries than the room are handed back: an event with more subscribers than that
-- has the rest written as rows, so memory stays bounded however many subscribers there are. A subscriber whose
-- delivery of the event is already written (a crashed worker's lease ran out after it recorded some) is left
-- out. An event with nothing to send from memory is done at once. Sent by OutboxRepository.fanOut.
--
-- Past the candidates, every read of a table is one scan driven by an array of keys, and no two of the
-- statement's own results are joined: whatever the statistics say, each step costs one pass at worst. (As in the
-- claim: statistics taken while the outbox was empty made the planner scan it once per candidate and join 3,000
-- events to 3,000 pairs row by row, 30 s a call; test/database/stale-statistics.)
-- :room how many deliveries to hand back at most (the room)
-- :deferSubscriptions subscriptions saturated here (their deliveries are written to wait)
-- :leaseMs the lease, ms
-- :leaseToken the lease's token
WITH subscribers AS MATERIALIZED (
  SELECT s.id, s.filter FROM plant_subscribers s
), events_wanted AS (
  -- As many events as fit the room if every subscriber receives each (with filters, fewer deliveries: the
  -- dispatcher fans out again).
  SELECT greatest(1, :room / greatest(1, (SELECT count(*) FROM subscribers)))::int AS n
), candidates AS MATERIALIZED (
  SELECT e.event_id, e.plant_id, e.seq FROM outbox_events e
  WHERE e.fanned_out_at IS NULL AND (e.leased_until IS NULL OR e.leased_until < now())
  ORDER BY e.seq
  LIMIT (SELECT 8 * n FROM events_wanted)
), heads AS (
  -- The earliest event of each candidate's plant not yet fanned out (pending_events, migration 36), found for all
  -- of them in one scan. A candidate goes only if it is its plant's; a head that is not a candidate is leased.
  SELECT ARRAY(SELECT DISTINCT ON (p.plant_id) p.event_id FROM pending_events p
               WHERE p.plant_id = ANY (ARRAY(SELECT DISTINCT plant_id FROM candidates))
               ORDER BY p.plant_id, p.seq) AS ids
), due AS MATERIALIZED (
  -- Locked by key alone, oldest first, and re-checked on the locked row's newest version: a replica may have
  -- leased or finished it since this statement's snapshot (as in the claim, whose rule it follows: whether it is
  -- fanned out already is asked outside, or the planner could scan the partial index of waiting events whole).
  SELECT l.* FROM (
    SELECT e.* FROM heads, outbox_events e
    WHERE e.event_id = ANY (heads.ids) AND (e.leased_until IS NULL OR e.leased_until < now())
    ORDER BY e.seq
    OFFSET 0
    FOR UPDATE OF e SKIP LOCKED
  ) l
  WHERE l.fanned_out_at IS NULL
  LIMIT (SELECT n FROM events_wanted)
), waiting AS MATERIALIZED (
  -- The subscribers and plants with a pending delivery (pending_deliveries, migration 36): one scan.
  SELECT DISTINCT w.subscription_id, w.plant_id FROM pending_deliveries w
  WHERE w.subscription_id = ANY (ARRAY(SELECT id FROM subscribers))
    AND w.plant_id = ANY (ARRAY(SELECT plant_id FROM due))
), written AS MATERIALIZED (
  -- Deliveries of these events written already: a row in deliveries (it waited, or its first attempt did not
  -- succeed), or in the log (it succeeded at once; by its key, from the events' creation on). One scan of each.
  SELECT rec.event_id, rec.subscription_id FROM deliveries rec
  WHERE rec.subscription_id = ANY (ARRAY(SELECT id FROM subscribers))
    AND rec.event_id = ANY (ARRAY(SELECT event_id FROM due))
  UNION ALL
  SELECT rec.event_id, rec.subscription_id FROM delivery_log rec
  WHERE rec.id = ANY (ARRAY(SELECT delivery_key(e.event_id, s.id) FROM due e, subscribers s))
    AND rec.created_at >= log_from((SELECT min(created_at) FROM due))
), fanout AS MATERIALIZED (
  -- Each event's pairs not written yet, with what a row of them needs (not joined back to due below).
  SELECT e.event_id, e.seq, e.plant_id, e.body, e.event_time, e.hops, e.origin_event_id, e.traceparent,
         s.id AS subscription_id,
         NOT (s.id = ANY(:deferSubscriptions::uuid[])) AND (s.id, e.plant_id) NOT IN (SELECT * FROM waiting)
           AS sendable
  FROM due e JOIN subscribers s ON plant_matches_filter(s.filter, e.plant_id, e.tag)
  WHERE (e.event_id, s.id) NOT IN (SELECT * FROM written)
), ranked AS MATERIALIZED (
  -- The ones handed back to send from memory: sendable, and within the room.
  SELECT f.*, f.sendable AND row_number() OVER (PARTITION BY f.sendable ORDER BY f.seq, f.subscription_id) <= :room
         AS in_memory
  FROM fanout f
), deferred AS (
  -- The ones that must wait: pending rows, numbered in the events' order (the claims keep it).
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id, traceparent)
  SELECT f.subscription_id, f.event_id, f.plant_id, f.body, f.event_time, f.hops, f.origin_event_id, f.traceparent
  FROM ranked f WHERE NOT f.in_memory
  ORDER BY f.seq, f.subscription_id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING subscription_id
), leased AS (
  UPDATE outbox_events e SET leased_until = now() + :leaseMs * interval '1 millisecond', lease_token = :leaseToken,
         fanned_out_at = CASE WHEN e.event_id IN (SELECT f.event_id FROM ranked f WHERE f.in_memory)
                         THEN NULL ELSE now() END
  WHERE e.event_id = ANY (ARRAY(SELECT event_id FROM due))
  RETURNING 1
)
-- Always one row at least: how many events were due tells the dispatcher whether to fan out again. A delivery
-- handed back has no row yet (no id), and what its subscription's deliveries are sent with.
SELECT n.*, x.* FROM (
  SELECT (SELECT count(*) FROM candidates)::int AS due_events, (SELECT count(*) FROM leased)::int AS events,
         (SELECT count(*) FROM deferred)::int AS deferred,
         -- Whose they are: a shut subscriber's rows wait for its gate to open, and must not make anyone claim.
         (SELECT coalesce(array_agg(DISTINCT subscription_id::text), '{}') FROM deferred) AS deferred_for
) n LEFT JOIN (
  SELECT NULL::uuid AS id, f.event_id, f.plant_id, f.body, f.event_time, 0 AS attempts, f.hops, f.origin_event_id,
         f.traceparent, s.*
  FROM ranked f JOIN subscription_send_settings s ON s.subscription_id = f.subscription_id
  WHERE f.in_memory
  ORDER BY f.seq, f.subscription_id
) x ON true;

-- @name record-fanned-out
-- Writes the deliveries sent from memory, each once, with its outcome: one that succeeded is appended to the
-- delivery log (delivery_log, by its key), any other is a row of deliveries (to retry, or failed). It marks an
-- event fanned out when the last of its deliveries is written and every other one has its record, in either
-- table: written by an earlier statement (which committed before this one began: the dispatcher's writes go one at
-- a time) or by this one. If one of them could not be written, the event stays leased until its lease runs out and
-- a fan-out sends that one again. A retry, or a failure an operator may replay, keeps its own body; a success
-- reads its event's. A delivery set aside unsent (its subscriber paused, or its circuit open: no attempt time) is
-- written pending with no attempt. What follows a delivery's end (a 410, an exhausted delivery) is
-- settle_final_outcomes' (migration 37).
--
-- All of it only under the event's lease as it was fanned out (its token): the event is locked first, so a
-- fan-out taking it after its lease lapsed either waits for this statement or has changed the token. A delivery
-- sent under a lease that was lost meanwhile writes no row and completes nothing; if the lease's new holder has
-- written its row already, the attempt joins that row's log (the receiver did get it), changing nothing else.
-- Sent unnamed by OutboxRepository.record: planned on every call, with the batch's size and the tables as they are
-- now (a plan cached while `deliveries` was small probed it by a scan per record once it had grown).
-- :ids the deliveries' ids (chosen when fanned out)
-- :subscriptionIds their subscriptions
-- :eventIds their events' ids
-- :plantIds their plants' ids
-- :eventTimes their events' times
-- :hops their hops
-- :originEventIds their origin events' ids
-- :traceparents their traceparents
-- :attemptedAt the attempts' times (attemptedAt)
-- :httpStatus the HTTP statuses they got (null: no answer)
-- :latencyMs their latencies, ms
-- :error the errors they ended with (storable text)
-- :responseBody what the subscribers answered (storable text)
-- :signature the signatures sent
-- :nextStatus the next status: pending (a retry), succeeded or failed
-- :delayMs the delay before a retry, ms (0 otherwise)
-- :disableReason why to disable the subscription (410 Gone), or null
-- :expectedEventIds with :expectedSubscriptionIds, each (event, subscription) pair a completing event must have a row for
-- :expectedSubscriptionIds the pair's subscription
-- :leaseTokens the leases' tokens (the events' as fanned out)
WITH r AS (
  SELECT * FROM unnest(:ids::uuid[], :subscriptionIds::uuid[], :eventIds::text[], :plantIds::bigint[],
                       :eventTimes::timestamptz[], :hops::int[], :originEventIds::text[], :traceparents::text[],
                       :attemptedAt::timestamptz[], :httpStatus::int[], :latencyMs::int[], :error::text[],
                       :responseBody::text[], :signature::text[], :nextStatus::text[], :delayMs::bigint[],
                       :disableReason::text[], :leaseTokens::uuid[])
    AS t(id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
         attempted_at, status, latency_ms, error, response_body, signature, next_status, delay_ms, disable_reason,
         lease_token)
), owned AS MATERIALIZED (
  SELECT e.event_id, e.created_at FROM outbox_events e
  WHERE e.event_id IN (SELECT event_id FROM r) AND e.fanned_out_at IS NULL
    AND e.lease_token IN (SELECT lease_token FROM r WHERE r.event_id = e.event_id)
  ORDER BY e.event_id
  FOR UPDATE OF e
), known AS MATERIALIZED (
  -- Each record with what is written of its delivery already: its row in deliveries, or in the log (by its key,
  -- from its event's creation on). Under the event's lock a delivery cannot be written meanwhile: the owner's
  -- statements take the lock one after the other, and this snapshot sees what the previous one wrote.
  SELECT r.*, r.event_id IN (SELECT event_id FROM owned) AS owns, ev.created_at AS event_created_at,
         attempt_entry(r.attempted_at, r.status, r.latency_ms, r.error, r.response_body, r.signature) AS entry,
         EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = r.subscription_id AND d.event_id = r.event_id)
           AS has_row,
         EXISTS (SELECT 1 FROM delivery_log l WHERE l.id = delivery_key(r.event_id, r.subscription_id)
                   AND l.created_at >= log_from(ev.created_at)) AS in_log
  FROM r LEFT JOIN outbox_events ev ON ev.event_id = r.event_id
), mine AS (
  SELECT * FROM known WHERE owns
), appended AS (
  -- Succeeded at once, and new: appended to the log, never to change again.
  INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
                            attempt_log)
  SELECT delivery_key(r.event_id, r.subscription_id), r.subscription_id, r.event_id, r.plant_id, r.event_time,
         r.hops, r.origin_event_id, r.traceparent, jsonb_build_array(r.entry)
  FROM mine r
  WHERE r.next_status = 'succeeded' AND NOT r.has_row AND NOT r.in_log
    -- A subscription removed for good meanwhile (retention) takes its deliveries with it.
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = r.subscription_id)
  RETURNING 1
), written AS (
  -- To retry, failed, or a delivery whose row exists already: a row of the mutable table. One set aside unsent
  -- (no attempt time) has made no attempt and has an empty log.
  INSERT INTO deliveries AS d (id, subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                               traceparent, status, attempts, next_attempt_at, attempt_log)
  SELECT r.id, r.subscription_id, r.event_id, r.plant_id,
         CASE WHEN r.next_status <> 'succeeded' THEN (SELECT e.body FROM outbox_events e WHERE e.event_id = r.event_id) END,
         r.event_time, r.hops, r.origin_event_id, r.traceparent, r.next_status,
         CASE WHEN r.attempted_at IS NULL THEN 0 ELSE 1 END,
         now() + r.delay_ms * interval '1 millisecond',
         CASE WHEN r.attempted_at IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(r.entry) END
  FROM mine r
  WHERE (r.next_status <> 'succeeded' OR r.has_row) AND NOT r.in_log
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = r.subscription_id)
  ON CONFLICT (subscription_id, event_id) DO UPDATE
    SET attempts = d.attempts + EXCLUDED.attempts, attempt_log = append_attempts(d.attempt_log, EXCLUDED.attempt_log),
        updated_at = now()
  -- Failed for good by this attempt: written now (not joined to a row the lease's new holder wrote).
  RETURNING d.id AS delivery_id, d.subscription_id, d.event_id, d.plant_id, d.attempts, d.xmax = 0 AND d.status = 'failed'
            AS exhausted
), late AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, updated_at = now(),
         attempt_log = append_attempts(d.attempt_log, jsonb_build_array(r.entry))
  FROM known r
  WHERE NOT r.owns AND d.subscription_id = r.subscription_id AND d.event_id = r.event_id
    AND r.attempted_at IS NOT NULL
  RETURNING 1
), late_in_log AS (
  -- Sent again (a lease lost, or a record whose answer was lost and is written again): the log's row keeps the
  -- attempt, and nothing else changes. The only update the log sees, and a rare one.
  UPDATE delivery_log l SET attempts = l.attempts + 1, updated_at = now(),
         attempt_log = append_attempts(l.attempt_log, jsonb_build_array(r.entry))
  FROM known r
  WHERE r.in_log AND r.attempted_at IS NOT NULL AND l.id = delivery_key(r.event_id, r.subscription_id)
    AND l.created_at >= log_from(r.event_created_at)
  RETURNING 1
), expected AS (
  SELECT * FROM unnest(:expectedEventIds::text[], :expectedSubscriptionIds::uuid[]) AS x(event_id, subscription_id)
), done AS (
  UPDATE outbox_events o SET fanned_out_at = now(), leased_until = NULL, lease_token = NULL
  WHERE o.event_id IN (SELECT event_id FROM expected) AND o.event_id IN (SELECT event_id FROM owned)
    AND o.event_id NOT IN (
      -- Events with a delivery neither written by this statement nor before (no row in deliveries, none in the
      -- log). Uncorrelated, so hashed: not a scan of the batch for each expected pair of each event (quadratic in
      -- the batch, 500 records at most).
      SELECT x.event_id FROM expected x JOIN owned oe ON oe.event_id = x.event_id
      WHERE (x.event_id, x.subscription_id) NOT IN (SELECT event_id, subscription_id FROM mine)
        AND NOT (EXISTS (SELECT 1 FROM deliveries rec
                         WHERE rec.subscription_id = x.subscription_id AND rec.event_id = x.event_id)
                 OR EXISTS (SELECT 1 FROM delivery_log rec WHERE rec.id = delivery_key(x.event_id, x.subscription_id)
                              AND rec.created_at >= log_from(oe.created_at))))
  RETURNING 1
)
SELECT settle_final_outcomes(
         ARRAY(SELECT ROW(r.subscription_id, r.disable_reason)::gone_subscription FROM mine r
               WHERE r.disable_reason IS NOT NULL),
         ARRAY(SELECT ROW(w.delivery_id, w.subscription_id, w.event_id, w.plant_id, w.attempts, r.attempted_at,
                          r.status, r.error)::exhausted_delivery
               FROM written w JOIN mine r ON r.id = w.delivery_id WHERE w.exhausted)
       ) AS operational;

-- @name record-succeeded
-- record-fanned-out's common case alone: a batch of deliveries sent from memory whose every attempt succeeded at
-- once (no retry, no failure, nothing set aside, so nothing to disable and no operational event). Each is appended
-- to the delivery log by its key, and an event is marked fanned out when every (event, subscription) pair it must
-- have is written: by this statement, or earlier, in either table.
--
-- All or nothing: it writes only if every delivery's event is still leased to the claim that fanned it out (the
-- event is locked first, as in record-fanned-out) and none of the deliveries is written already (a row in
-- deliveries, or in the log). Otherwise it writes nothing and answers `clear` false, and the repository sends the
-- batch to record-fanned-out, which handles those cases (a lost lease's late record, a record written again). So
-- each delivery is still written once, in one table, only under its event's lease.
--
-- Cheaper than record-fanned-out by its shape: what is written already is found in one pass over each table for
-- the whole batch (the batch's deliveries and the completing events' others together), not a probe per record
-- and per pair; none of the CTEs for retries, failures, late records, 410s and operational events is planned or
-- run. Sent unnamed by OutboxRepository.record, as record-fanned-out is, for the same reason.
-- :subscriptionIds their subscriptions
-- :eventIds their events' ids
-- :plantIds their plants' ids
-- :eventTimes their events' times
-- :hops their hops
-- :originEventIds their origin events' ids
-- :traceparents their traceparents
-- :attemptedAt the attempts' times (attemptedAt)
-- :httpStatus the HTTP statuses they got
-- :latencyMs their latencies, ms
-- :error the errors they ended with (storable text)
-- :responseBody what the subscribers answered (storable text)
-- :signature the signatures sent
-- :leaseTokens the leases' tokens (the events' as fanned out)
-- :expectedEventIds with :expectedSubscriptionIds, each (event, subscription) pair a completing event must have a row for
-- :expectedSubscriptionIds the pair's subscription
WITH r AS MATERIALIZED (
  SELECT t.*, delivery_key(t.event_id, t.subscription_id) AS key
  FROM unnest(:subscriptionIds::uuid[], :eventIds::text[], :plantIds::bigint[], :eventTimes::timestamptz[],
              :hops::int[], :originEventIds::text[], :traceparents::text[], :attemptedAt::timestamptz[],
              :httpStatus::int[], :latencyMs::int[], :error::text[], :responseBody::text[], :signature::text[],
              :leaseTokens::uuid[])
    AS t(subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent, attempted_at, status,
         latency_ms, error, response_body, signature, lease_token)
), locked AS MATERIALIZED (
  -- The batch's events, locked by key. Looked up by an array of keys, which the planner takes as a few index
  -- probes whatever the statistics say: a filter on fanned_out_at here let it pick the partial index of events
  -- not yet fanned out instead, a scan of the whole backlog on each call. Whether each is still this claim's is
  -- asked of the row as locked (its newest version), in owned.
  SELECT e.event_id, e.created_at, e.fanned_out_at, e.lease_token FROM outbox_events e
  WHERE e.event_id = ANY ((SELECT array_agg(DISTINCT event_id) FROM r)::text[])
  ORDER BY e.event_id
  FOR UPDATE OF e
), owned AS MATERIALIZED (
  SELECT e.event_id, e.created_at FROM locked e
  WHERE e.fanned_out_at IS NULL AND (e.event_id, e.lease_token) IN (SELECT event_id, lease_token FROM r)
), expected AS (
  SELECT * FROM unnest(:expectedEventIds::text[], :expectedSubscriptionIds::uuid[]) AS x(event_id, subscription_id)
), probed AS MATERIALIZED (
  -- Every delivery whose record this statement needs: the batch's (sent), and those its completing events must
  -- have that are not in it (written earlier, or not: then the event is not complete yet).
  SELECT r.event_id, r.subscription_id, r.key, true AS sent FROM r
  UNION ALL
  SELECT x.event_id, x.subscription_id, delivery_key(x.event_id, x.subscription_id), false FROM expected x
  WHERE (x.event_id, x.subscription_id) NOT IN (SELECT event_id, subscription_id FROM r)
), found AS MATERIALIZED (
  -- Those written already, in either table: one pass over each for the whole batch, by arrays of keys (index
  -- probes, as in locked; joined to probed, a join chose whole scans of the day's log). Under the events' locks
  -- nothing of theirs is written meanwhile (see record-fanned-out's known).
  SELECT d.event_id, d.subscription_id FROM deliveries d
  WHERE d.subscription_id = ANY ((SELECT array_agg(DISTINCT subscription_id) FROM probed)::uuid[])
    AND d.event_id = ANY ((SELECT array_agg(DISTINCT event_id) FROM probed)::text[])
  UNION ALL
  SELECT l.event_id, l.subscription_id FROM delivery_log l
  WHERE l.id = ANY ((SELECT array_agg(key) FROM probed)::uuid[])
    AND l.created_at >= log_from((SELECT min(created_at) FROM owned))
), clear AS MATERIALIZED (
  SELECT NOT EXISTS (SELECT 1 FROM r WHERE r.event_id NOT IN (SELECT event_id FROM owned))
     AND NOT EXISTS (SELECT 1 FROM probed p WHERE p.sent
                       AND (p.event_id, p.subscription_id) IN (SELECT event_id, subscription_id FROM found)) AS ok
), appended AS (
  INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
                            attempt_log)
  SELECT r.key, r.subscription_id, r.event_id, r.plant_id, r.event_time, r.hops, r.origin_event_id, r.traceparent,
         jsonb_build_array(attempt_entry(r.attempted_at, r.status, r.latency_ms, r.error, r.response_body,
                                         r.signature))
  FROM r
  WHERE (SELECT ok FROM clear)
    -- A subscription removed for good meanwhile (retention) takes its deliveries with it.
    AND r.subscription_id IN (SELECT id FROM subscriptions)
  RETURNING 1
), done AS (
  UPDATE outbox_events o SET fanned_out_at = now(), leased_until = NULL, lease_token = NULL
  WHERE (SELECT ok FROM clear)
    AND o.event_id IN (SELECT event_id FROM expected) AND o.event_id IN (SELECT event_id FROM owned)
    AND o.event_id NOT IN (
      -- Events with a delivery neither in this batch nor written before.
      SELECT p.event_id FROM probed p
      WHERE NOT p.sent AND (p.event_id, p.subscription_id) NOT IN (SELECT event_id, subscription_id FROM found))
  RETURNING 1
)
SELECT ok AS clear FROM clear;
