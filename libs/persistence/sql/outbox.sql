-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every outbox statement the repositories send, exactly as sent, with what each parameter means.

-- fan-out
-- Sent by OutboxRepository.fanOut.
-- $1: how many deliveries to hand back at most (the room)
-- $2: subscriptions saturated here (their deliveries are written to wait)
-- $3: the lease, ms
-- $4: the lease's token
WITH subscribers AS MATERIALIZED (
  SELECT s.id, s.filter FROM subscriptions s WHERE s.enabled AND s.kind = 'plants'
), events_wanted AS (
  -- As many events as fit the room if every subscriber receives each (with filters, fewer deliveries: the
  -- dispatcher fans out again).
  SELECT greatest(1, $1 / greatest(1, (SELECT count(*) FROM subscribers)))::int AS n
), candidates AS MATERIALIZED (
  SELECT e.event_id FROM outbox_events e
  WHERE e.fanned_out_at IS NULL AND (e.leased_until IS NULL OR e.leased_until < now())
  ORDER BY e.seq
  LIMIT (SELECT 8 * n FROM events_wanted)
), due AS MATERIALIZED (
  -- Re-checked on the locked row's newest version: a replica may have leased or finished it since this
  -- statement's snapshot (as in CLAIM).
  SELECT e.* FROM candidates c JOIN outbox_events e ON e.event_id = c.event_id
  WHERE e.fanned_out_at IS NULL AND (e.leased_until IS NULL OR e.leased_until < now())
    AND NOT EXISTS (
  SELECT 1 FROM outbox_events p
  WHERE p.plant_id = e.plant_id AND p.fanned_out_at IS NULL AND p.seq < e.seq)
  LIMIT (SELECT n FROM events_wanted)
  FOR UPDATE OF e SKIP LOCKED
), fanout AS MATERIALIZED (
  SELECT e.event_id, e.seq, s.id AS subscription_id,
         NOT (s.id = ANY($2::uuid[])) AND NOT EXISTS (
  SELECT 1 FROM deliveries earlier
  WHERE earlier.subscription_id = s.id AND earlier.plant_id = e.plant_id AND earlier.status = 'pending') AS sendable
  FROM due e JOIN subscribers s ON plant_matches_filter(s.filter, e.plant_id, e.tag)
  WHERE NOT (
  EXISTS (SELECT 1 FROM deliveries rec WHERE rec.subscription_id = s.id AND rec.event_id = e.event_id)
  OR EXISTS (SELECT 1 FROM delivery_log rec WHERE rec.id = md5(e.event_id || '/' || s.id::text)::uuid
               AND rec.created_at >= coalesce(e.created_at - interval '1 minute', '-infinity')))
), ranked AS MATERIALIZED (
  -- The ones handed back to send from memory: sendable, and within the room.
  SELECT f.*, f.sendable AND row_number() OVER (PARTITION BY f.sendable ORDER BY f.seq, f.subscription_id) <= $1
         AS in_memory
  FROM fanout f
), deferred AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id, traceparent)
  SELECT f.subscription_id, e.event_id, e.plant_id, e.body, e.event_time, e.hops, e.origin_event_id, e.traceparent
  FROM ranked f JOIN due e USING (event_id) WHERE NOT f.in_memory
  ORDER BY e.seq, f.subscription_id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1
), leased AS (
  UPDATE outbox_events e SET leased_until = now() + $3 * interval '1 millisecond', lease_token = $4,
         fanned_out_at = CASE WHEN EXISTS (SELECT 1 FROM ranked f WHERE f.event_id = e.event_id AND f.in_memory)
                         THEN NULL ELSE now() END
  FROM due WHERE e.event_id = due.event_id
  RETURNING 1
)
-- Always one row at least: how many events were due tells the dispatcher whether to fan out again.
SELECT n.*, x.* FROM (
  SELECT (SELECT count(*) FROM candidates)::int AS due_events, (SELECT count(*) FROM leased)::int AS events,
         (SELECT count(*) FROM deferred)::int AS deferred
) n LEFT JOIN (
  SELECT NULL::uuid AS id, f.subscription_id, e.event_id, e.plant_id, e.body, e.event_time, 0 AS attempts,
   e.hops, e.origin_event_id, e.traceparent, s.url, s.token, s.secret, s.max_deliveries_per_second, s.max_concurrency, s.headers, s.secret_headers, s.destination, s.destination_secrets,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret
  FROM ranked f JOIN due e USING (event_id) JOIN subscriptions s ON s.id = f.subscription_id
  WHERE f.in_memory
  ORDER BY e.seq, f.subscription_id
) x ON true;

-- record-fanned-out
-- Sent by OutboxRepository.record.
-- $1: the deliveries' ids (chosen when fanned out)
-- $2: their subscriptions
-- $3: their events' ids
-- $4: their plants' ids
-- $5: their events' times
-- $6: their hops
-- $7: their origin events' ids
-- $8: their traceparents
-- $9: the attempts' times (attemptedAt)
-- $10: the HTTP statuses they got (null: no answer)
-- $11: their latencies, ms
-- $12: the errors they ended with (storable text)
-- $13: what the subscribers answered (storable text)
-- $14: the signatures sent
-- $15: the next status: pending (a retry), succeeded or failed
-- $16: the delay before a retry, ms (0 otherwise)
-- $17: why to disable the subscription (410 Gone), or null
-- $18: with $19: each (event, subscription) pair a completing event must have a row for, the event's id
-- $19: the pair's subscription
-- $20: the leases' tokens (the events' as fanned out)
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::timestamptz[], $6::int[], $7::text[],
                       $8::text[], $9::timestamptz[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[],
                       $15::text[], $16::bigint[], $17::text[], $20::uuid[])
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
         EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = r.subscription_id AND d.event_id = r.event_id)
           AS has_row,
         EXISTS (SELECT 1 FROM delivery_log l WHERE l.id = md5(r.event_id || '/' || r.subscription_id::text)::uuid
                   AND l.created_at >= coalesce(ev.created_at - interval '1 minute', '-infinity')) AS in_log
  FROM r LEFT JOIN outbox_events ev ON ev.event_id = r.event_id
), mine AS (
  SELECT * FROM known WHERE owns
), appended AS (
  -- Succeeded at once, and new: appended to the log, never to change again.
  INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
                            attempt_log)
  SELECT md5(r.event_id || '/' || r.subscription_id::text)::uuid, r.subscription_id, r.event_id, r.plant_id, r.event_time,
         r.hops, r.origin_event_id, r.traceparent, jsonb_build_array(jsonb_build_object(
  'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
  'error', r.error, 'responseBody', r.response_body, 'signature', r.signature))
  FROM mine r
  WHERE r.next_status = 'succeeded' AND NOT r.has_row AND NOT r.in_log
    -- A subscription removed for good meanwhile (retention) takes its deliveries with it.
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = r.subscription_id)
  RETURNING 1
), written AS (
  -- To retry, failed, or a delivery whose row exists already: a row of the mutable table.
  INSERT INTO deliveries AS d (id, subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                               traceparent, status, attempts, next_attempt_at, attempt_log)
  SELECT r.id, r.subscription_id, r.event_id, r.plant_id,
         CASE WHEN r.next_status <> 'succeeded' THEN (SELECT e.body FROM outbox_events e WHERE e.event_id = r.event_id) END,
         r.event_time, r.hops, r.origin_event_id, r.traceparent, r.next_status, CASE WHEN r.attempted_at IS NULL THEN 0 ELSE 1 END,
         now() + r.delay_ms * interval '1 millisecond', CASE WHEN r.attempted_at IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object(
  'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
  'error', r.error, 'responseBody', r.response_body, 'signature', r.signature)) END
  FROM mine r
  WHERE (r.next_status <> 'succeeded' OR r.has_row) AND NOT r.in_log
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = r.subscription_id)
  ON CONFLICT (subscription_id, event_id) DO UPDATE
    SET attempts = d.attempts + EXCLUDED.attempts, attempt_log = append_attempts(d.attempt_log, EXCLUDED.attempt_log), updated_at = now()
  -- Failed for good by this attempt: written now (not joined to a row the lease's new holder wrote).
  RETURNING d.id AS delivery_id, d.subscription_id, d.event_id, d.plant_id, d.attempts, d.xmax = 0 AND d.status = 'failed'
            AS exhausted
), late AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, updated_at = now(),
         attempt_log = append_attempts(d.attempt_log, jsonb_build_array(jsonb_build_object(
  'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
  'error', r.error, 'responseBody', r.response_body, 'signature', r.signature)))
  FROM known r
  WHERE NOT r.owns AND d.subscription_id = r.subscription_id AND d.event_id = r.event_id
    AND r.attempted_at IS NOT NULL
  RETURNING 1
), late_in_log AS (
  -- Sent again (a lease lost, or a record whose answer was lost and is written again): the log's row keeps the
  -- attempt, and nothing else changes. The only update the log sees, and a rare one.
  UPDATE delivery_log l SET attempts = l.attempts + 1, updated_at = now(),
         attempt_log = append_attempts(l.attempt_log, jsonb_build_array(jsonb_build_object(
  'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
  'error', r.error, 'responseBody', r.response_body, 'signature', r.signature)))
  FROM known r
  WHERE r.in_log AND r.attempted_at IS NOT NULL AND l.id = md5(r.event_id || '/' || r.subscription_id::text)::uuid AND l.created_at >= coalesce(r.event_created_at - interval '1 minute', '-infinity')
  RETURNING 1
), expected AS (
  SELECT * FROM unnest($18::text[], $19::uuid[]) AS x(event_id, subscription_id)
), done AS (
  UPDATE outbox_events o SET fanned_out_at = now(), leased_until = NULL, lease_token = NULL
  WHERE o.event_id IN (SELECT event_id FROM expected) AND o.event_id IN (SELECT event_id FROM owned)
    AND o.event_id NOT IN (
      -- Events with a delivery neither written by this statement nor before. Uncorrelated, so hashed: not a scan
      -- of the batch for each expected pair of each event (quadratic in the batch, 500 records at most).
      SELECT x.event_id FROM expected x JOIN owned oe ON oe.event_id = x.event_id
      WHERE (x.event_id, x.subscription_id) NOT IN (SELECT event_id, subscription_id FROM mine)
        AND NOT (
  EXISTS (SELECT 1 FROM deliveries rec WHERE rec.subscription_id = x.subscription_id AND rec.event_id = x.event_id)
  OR EXISTS (SELECT 1 FROM delivery_log rec WHERE rec.id = md5(x.event_id || '/' || x.subscription_id::text)::uuid
               AND rec.created_at >= coalesce(oe.created_at - interval '1 minute', '-infinity'))))
  RETURNING 1
), disabled AS (
  UPDATE subscriptions s SET enabled = false, disabled_reason = g.disable_reason, updated_at = now()
  FROM (SELECT DISTINCT ON (subscription_id) subscription_id, disable_reason FROM mine
        WHERE disable_reason IS NOT NULL) g
  WHERE s.id = g.subscription_id AND s.enabled
  RETURNING s.id, s.disabled_reason
), disabled_audit AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT a.* FROM disabled x, worker_disabled_audit(x.id, x.disabled_reason) a
  RETURNING 1
),
exhausted AS MATERIALIZED (
  SELECT * FROM (SELECT w.*, r.attempted_at, r.status AS http_status, r.error
      FROM written w JOIN mine r ON r.id = w.delivery_id WHERE w.exhausted) x
), exhausted_notices AS (
  INSERT INTO operational_notices AS o (subscription_id, type, window_ends, held, reported)
  SELECT subscription_id, 'delivery.exhausted', now() + interval '60 seconds', count(*) - 1, 0
  FROM exhausted GROUP BY subscription_id ORDER BY subscription_id
  ON CONFLICT (subscription_id, type) DO UPDATE SET
    reported = CASE WHEN o.window_ends <= now() THEN o.held ELSE o.reported END,
    held = CASE WHEN o.window_ends <= now() THEN excluded.held ELSE o.held + excluded.held + 1 END,
    window_ends = CASE WHEN o.window_ends <= now() THEN excluded.window_ends ELSE o.window_ends END
  RETURNING o.subscription_id, o.reported, o.window_ends = now() + interval '60 seconds' AS notify
),
op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (
  SELECT e.* FROM disabled x, subscription_disabled_event(x.id, x.disabled_reason) e UNION ALL (
  SELECT DISTINCT ON (x.subscription_id) 'delivery.exhausted'::text AS type, NULL::uuid AS subscription_id,
         jsonb_build_object('deliveryId', x.delivery_id, 'subscriptionId', x.subscription_id, 'eventId', x.event_id,
           'plantId', x.plant_id, 'attempts', x.attempts,
           'lastAttempt', jsonb_build_object('attemptedAt', event_time_text(x.attempted_at), 'status', x.http_status,
             'error', x.error), 'heldBack', n.reported) AS data
  FROM exhausted x JOIN exhausted_notices n ON n.subscription_id = x.subscription_id AND n.notify
  ORDER BY x.subscription_id, x.delivery_id)) x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM op_deliveries)::int AS operational;

-- record-succeeded
-- Sent by OutboxRepository.record.
-- $1: their subscriptions
-- $2: their events' ids
-- $3: their plants' ids
-- $4: their events' times
-- $5: their hops
-- $6: their origin events' ids
-- $7: their traceparents
-- $8: the attempts' times (attemptedAt)
-- $9: the HTTP statuses they got
-- $10: their latencies, ms
-- $11: the errors they ended with (storable text)
-- $12: what the subscribers answered (storable text)
-- $13: the signatures sent
-- $14: the leases' tokens (the events' as fanned out)
-- $15: with $16: each (event, subscription) pair a completing event must have a row for, the event's id
-- $16: the pair's subscription
WITH r AS MATERIALIZED (
  SELECT t.*, md5(t.event_id || '/' || t.subscription_id::text)::uuid AS key
  FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::timestamptz[], $5::int[], $6::text[], $7::text[],
              $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[], $13::text[], $14::uuid[])
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
  SELECT * FROM unnest($15::text[], $16::uuid[]) AS x(event_id, subscription_id)
), probed AS MATERIALIZED (
  -- Every delivery whose record this statement needs: the batch's (sent), and those its completing events must
  -- have that are not in it (written earlier, or not: then the event is not complete yet).
  SELECT r.event_id, r.subscription_id, r.key, true AS sent FROM r
  UNION ALL
  SELECT x.event_id, x.subscription_id, md5(x.event_id || '/' || x.subscription_id::text)::uuid, false FROM expected x
  WHERE (x.event_id, x.subscription_id) NOT IN (SELECT event_id, subscription_id FROM r)
), found AS MATERIALIZED (
  -- Those written already, in either table: one pass over each for the whole batch, by arrays of keys (index
  -- probes, as in locked; joined to probed, a join chose whole scans of the day's log). Under the events' locks
  -- nothing of theirs is written meanwhile (see RECORD_FANNED_OUT's known).
  SELECT d.event_id, d.subscription_id FROM deliveries d
  WHERE d.subscription_id = ANY ((SELECT array_agg(DISTINCT subscription_id) FROM probed)::uuid[])
    AND d.event_id = ANY ((SELECT array_agg(DISTINCT event_id) FROM probed)::text[])
  UNION ALL
  SELECT l.event_id, l.subscription_id FROM delivery_log l
  WHERE l.id = ANY ((SELECT array_agg(key) FROM probed)::uuid[])
    AND l.created_at >= coalesce((SELECT min(created_at) FROM owned) - interval '1 minute', '-infinity')
), clear AS MATERIALIZED (
  SELECT NOT EXISTS (SELECT 1 FROM r WHERE r.event_id NOT IN (SELECT event_id FROM owned))
     AND NOT EXISTS (SELECT 1 FROM probed p WHERE p.sent
                       AND (p.event_id, p.subscription_id) IN (SELECT event_id, subscription_id FROM found)) AS ok
), appended AS (
  INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
                            attempt_log)
  SELECT r.key, r.subscription_id, r.event_id, r.plant_id, r.event_time, r.hops, r.origin_event_id, r.traceparent,
         jsonb_build_array(jsonb_build_object(
  'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
  'error', r.error, 'responseBody', r.response_body, 'signature', r.signature))
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

-- record-attempts
-- Sent by OutboxRepository.record.
-- $1: the claimed deliveries' ids
-- $2: the attempts' times (attemptedAt)
-- $3: the HTTP statuses they got (null: no answer)
-- $4: their latencies, ms
-- $5: the errors they ended with (storable text)
-- $6: what the subscribers answered (storable text)
-- $7: the next status: pending (a retry), succeeded or failed
-- $8: the delay before a retry, ms (0 otherwise)
-- $9: why to disable the subscription (410 Gone), or null
-- $10: the signatures sent
-- $11: the claims' lease tokens
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
         attempt_log = append_attempts(d.attempt_log, jsonb_build_array(jsonb_build_object(
  'attemptedAt', r.attempted_at, 'status', r.status, 'latencyMs', r.latency_ms,
  'error', r.error, 'responseBody', r.response_body, 'signature', r.signature))),
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
), disabled AS (
  UPDATE subscriptions s SET enabled = false, disabled_reason = g.disable_reason, updated_at = now()
  FROM (SELECT DISTINCT ON (subscription_id) subscription_id, disable_reason FROM updated
        WHERE disable_reason IS NOT NULL) g
  WHERE s.id = g.subscription_id AND s.enabled
  RETURNING s.id, s.disabled_reason
), disabled_audit AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT a.* FROM disabled x, worker_disabled_audit(x.id, x.disabled_reason) a
  RETURNING 1
),
exhausted AS MATERIALIZED (
  SELECT * FROM (SELECT * FROM updated WHERE exhausted) x
), exhausted_notices AS (
  INSERT INTO operational_notices AS o (subscription_id, type, window_ends, held, reported)
  SELECT subscription_id, 'delivery.exhausted', now() + interval '60 seconds', count(*) - 1, 0
  FROM exhausted GROUP BY subscription_id ORDER BY subscription_id
  ON CONFLICT (subscription_id, type) DO UPDATE SET
    reported = CASE WHEN o.window_ends <= now() THEN o.held ELSE o.reported END,
    held = CASE WHEN o.window_ends <= now() THEN excluded.held ELSE o.held + excluded.held + 1 END,
    window_ends = CASE WHEN o.window_ends <= now() THEN excluded.window_ends ELSE o.window_ends END
  RETURNING o.subscription_id, o.reported, o.window_ends = now() + interval '60 seconds' AS notify
),
op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (
  SELECT e.* FROM disabled x, subscription_disabled_event(x.id, x.disabled_reason) e UNION ALL (
  SELECT DISTINCT ON (x.subscription_id) 'delivery.exhausted'::text AS type, NULL::uuid AS subscription_id,
         jsonb_build_object('deliveryId', x.delivery_id, 'subscriptionId', x.subscription_id, 'eventId', x.event_id,
           'plantId', x.plant_id, 'attempts', x.attempts,
           'lastAttempt', jsonb_build_object('attemptedAt', event_time_text(x.attempted_at), 'status', x.http_status,
             'error', x.error), 'heldBack', n.reported) AS data
  FROM exhausted x JOIN exhausted_notices n ON n.subscription_id = x.subscription_id AND n.notify
  ORDER BY x.subscription_id, x.delivery_id)) x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM op_deliveries)::int AS operational;
