-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every deliveries statement the repositories send, exactly as sent, with what each parameter means.

-- list-deliveries
-- Sent by DeliveryRepository.listNewest.
-- $1: unused: null (see LIST_SUBSCRIPTION_DELIVERIES)
-- $2: the filter's status, or null
-- $3: the filter's plant, or null
-- $4: the page: rows numbered below this seq, or null for the newest
-- $5: how many rows at most
-- $6: created at or after, or null
-- $7: created before, or null
SELECT id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at FROM all_deliveries
       WHERE $1::uuid IS NULL AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR plant_id = $3)
         AND seq < coalesce($4::bigint, 9223372036854775807)
         AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
       ORDER BY seq DESC LIMIT $5;

-- list-subscription-deliveries
-- Sent by DeliveryRepository.listNewest.
-- $1: the subscription
-- $2: the filter's status, or null
-- $3: the filter's plant, or null
-- $4: the page: rows numbered below this seq, or null for the newest
-- $5: how many rows at most
-- $6: created at or after, or null
-- $7: created before, or null
SELECT id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at FROM all_deliveries
       WHERE subscription_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR plant_id = $3)
         AND seq < coalesce($4::bigint, 9223372036854775807)
         AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
       ORDER BY seq DESC LIMIT $5;

-- find-delivery
-- Sent by DeliveryRepository.findById.
-- $1: the delivery's id
SELECT d.id, d.seq, d.subscription_id, d.event_id, d.plant_id, d.event_type, d.status, d.attempts, d.next_attempt_at, d.created_at, d.updated_at, d.attempt_log, coalesce(d.body, e.body) AS body, d.hops, d.origin_event_id,
              coalesce(s.token IS NOT NULL, false) AS has_token, coalesce(s.headers, '{}') AS custom_headers,
              ARRAY(SELECT jsonb_object_keys(s.secret_headers) ORDER BY 1) AS secret_header_names, d.backfill_id
       FROM all_deliveries d LEFT JOIN subscriptions s ON s.id = d.subscription_id
       LEFT JOIN outbox_events e ON d.body IS NULL AND e.event_id = d.event_id
       WHERE d.id = $1;

-- retry-failed-delivery
-- Sent by DeliveryRepository.retryFailed.
-- $1: the delivery's id
UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
           replayed_from = NULL
       WHERE id = $1 AND status = 'failed'
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at;

-- retry-failed-matching
-- Sent by DeliveryRepository.retryFailedMatching.
-- $1: the filter's subscription, or null
-- $2: the filter's plant, or null
-- $3: created at or after, or null
-- $4: created before, or null
UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
           replayed_from = NULL
       WHERE d.status = 'failed'
         AND ($1::uuid IS NULL OR d.subscription_id = $1) AND ($2::bigint IS NULL OR d.plant_id = $2)
         AND ($3::timestamptz IS NULL OR d.created_at >= $3) AND ($4::timestamptz IS NULL OR d.created_at < $4)
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING d.id, d.subscription_id;

-- retry-failed-since
-- Sent by DeliveryRepository.retryFailedSince.
-- $1: the subscription
-- $2: created at or after
UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
           replayed_from = NULL
       WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2;

-- replay-since
-- Sent by DeliveryRepository.replaySince.
-- $1: the subscription
-- $2: the event's time, at or after
-- $3: the cursor: the last seq looked at (0 at the start)
-- $4: how many to re-queue at most
-- $5: how many deliveries to look at at most
-- $6: the wait before the first is due, ms
WITH scanned AS MATERIALIZED (
  SELECT a.id, a.seq, a.subscription_id, a.event_id, a.event_type, a.backfill_id, a.status, a.event_time, a.appended,
         a.created_at
  FROM all_deliveries a
  WHERE a.subscription_id = $1 AND a.seq > $3 AND a.created_at >= $2::timestamptz - interval '1 minute'
  ORDER BY a.seq LIMIT $5
), matched AS MATERIALIZED (
  SELECT x.*, row_number() OVER (ORDER BY x.seq) AS n FROM scanned x
  WHERE x.subscription_id = $1 AND x.event_type IS NULL AND x.backfill_id IS NULL AND x.status <> 'pending'
    AND x.event_time >= $2 AND (NOT x.appended OR EXISTS (SELECT 1 FROM outbox_events e WHERE e.event_id = x.event_id))
), taken AS (
  SELECT * FROM matched WHERE n <= $4
), requeued AS (
  UPDATE deliveries d SET replayed_from = d.status, status = 'pending',
         next_attempt_at = now() + $6 * interval '1 millisecond', leased_until = NULL, lease_token = NULL,
         updated_at = now()
  FROM taken t
  WHERE NOT t.appended AND d.id = t.id AND d.status <> 'pending'
  RETURNING d.id
), moved AS (
  DELETE FROM delivery_log l USING taken t
  WHERE t.appended AND l.id = t.id AND l.created_at = t.created_at
    AND l.created_at >= $2::timestamptz - interval '1 minute'
  RETURNING l.*
), reinserted AS (
  INSERT INTO deliveries (id, seq, subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                          traceparent, status, attempts, attempt_log, next_attempt_at, created_at, updated_at,
                          replayed_from)
  OVERRIDING SYSTEM VALUE
  SELECT m.id, m.seq, m.subscription_id, m.event_id, m.plant_id, e.body, m.event_time, m.hops, m.origin_event_id,
         m.traceparent, 'pending', m.attempts, m.attempt_log, now() + $6 * interval '1 millisecond', m.created_at,
         now(), 'succeeded'
  FROM moved m JOIN outbox_events e ON e.event_id = m.event_id
  ORDER BY m.seq
  RETURNING 1
)
SELECT (SELECT count(*) FROM requeued)::int + (SELECT count(*) FROM reinserted)::int AS requeued,
       (SELECT count(*) FROM reinserted)::int AS moved, (SELECT count(*) FROM scanned)::int AS looked_at,
       coalesce(CASE WHEN (SELECT count(*) FROM matched) > $4 THEN (SELECT max(seq) FROM taken)
                     ELSE (SELECT max(seq) FROM scanned) END, $3) AS cursor,
       (SELECT count(*) FROM scanned) < $5 AND (SELECT count(*) FROM matched) <= $4 AS exhausted;

-- hold-replay
-- Sent by DeliveryRepository.holdReplay.
-- $1: the subscription
-- $2: the holder (a fresh uuid per call)
-- $3: how long at most, ms
WITH taken AS (
  INSERT INTO subscription_replays AS r (subscription_id, holder, until)
  VALUES ($1, $2, now() + $3 * interval '1 millisecond')
  ON CONFLICT (subscription_id) DO UPDATE SET holder = excluded.holder, until = excluded.until WHERE r.until <= now()
  RETURNING r.until
)
SELECT (SELECT until FROM taken) AS taken, (SELECT until FROM subscription_replays WHERE subscription_id = $1) AS held;

-- release-replay
-- Sent by DeliveryRepository.releaseReplay.
-- $1: the subscription
-- $2: the holder
DELETE FROM subscription_replays WHERE subscription_id = $1 AND holder = $2;

-- count-deliveries-by-status
-- Sent by DeliveryRepository.countByStatus.
-- $1: the window, hours back from now
SELECT status, count(*)::int AS n FROM all_deliveries WHERE created_at >= now() - $1 * interval '1 hour'
       GROUP BY status;

-- deliveries-per-minute
-- Sent by DeliveryRepository.perMinute.
-- $1: the window, minutes back from now
WITH m AS (
         SELECT generate_series(date_trunc('minute', now()) - ($1 - 1) * interval '1 minute',
                                date_trunc('minute', now()), interval '1 minute') AS minute
       ), e AS (
         SELECT date_trunc('minute', processed_at) AS minute, count(*)::int AS n FROM processed_events
         WHERE processed_at >= now() - $1 * interval '1 minute' GROUP BY 1
       ), d AS (
         SELECT date_trunc('minute', updated_at) AS minute,
                count(*) FILTER (WHERE status = 'succeeded')::int AS delivered,
                count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM all_deliveries WHERE created_at >= now() - $1 * interval '1 minute' AND status <> 'pending' GROUP BY 1
       )
       SELECT m.minute, coalesce(e.n, 0) AS accepted, coalesce(d.delivered, 0) AS delivered,
              coalesce(d.failed, 0) AS failed
       FROM m LEFT JOIN e USING (minute) LEFT JOIN d USING (minute) ORDER BY m.minute;
