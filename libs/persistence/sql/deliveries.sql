-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every deliveries statement the repositories send, exactly as sent, with what each parameter means.

-- list-deliveries
-- Sent by DeliveryRepository.listNewest.
-- $1: the filter's subscription, or null
-- $2: the filter's status, or null
-- $3: the filter's plant, or null
-- $4: the page: rows numbered below this seq, or null for the newest
-- $5: how many rows at most
-- $6: created at or after, or null
-- $7: created before, or null
SELECT id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at FROM all_deliveries
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::text IS NULL OR status = $2)
         AND ($3::bigint IS NULL OR plant_id = $3) AND ($4::bigint IS NULL OR seq < $4)
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
UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE id = $1 AND status = 'failed'
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at;

-- retry-failed-matching
-- Sent by DeliveryRepository.retryFailedMatching.
-- $1: the filter's subscription, or null
-- $2: the filter's plant, or null
-- $3: created at or after, or null
-- $4: created before, or null
UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE d.status = 'failed'
         AND ($1::uuid IS NULL OR d.subscription_id = $1) AND ($2::bigint IS NULL OR d.plant_id = $2)
         AND ($3::timestamptz IS NULL OR d.created_at >= $3) AND ($4::timestamptz IS NULL OR d.created_at < $4)
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING d.id, d.subscription_id;

-- retry-failed-since
-- Sent by DeliveryRepository.retryFailedSince.
-- $1: the subscription
-- $2: created at or after
UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2;

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
