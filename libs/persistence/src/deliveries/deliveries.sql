-- What an operator reads and replays; sending is the outbox's (outbox.repository.ts). A delivery is a row of
-- deliveries while it may change, or of the day-partitioned delivery_log once it succeeded at once; all_deliveries is
-- both.

-- @name list-deliveries
-- Newest first, one page, of every delivery or of one subscription's: the mutable rows and the appended ones
-- (all_deliveries), in the one order of their shared seq, so a page and the next never skip nor repeat one across the
-- two tables (a delivery is in one of them, written once with its seq). Each table's seq index, or with a
-- subscription its (subscription, seq) index, is read backwards from the page's seq and merged, so a subscription's
-- page reads its rows alone, however many others have (a portal link lists its own). Sent unnamed, so planned with
-- its values: a null filter folds away (`NULL IS NULL OR …` is true) and the index of what is given is used. Sent
-- by DeliveryRepository.listNewest.
-- :subscription the subscription, or null for every delivery
-- :status the filter's status, or null
-- :plant the filter's plant, or null
-- :before the page: rows numbered below this seq, or null for the newest
-- :limit how many rows at most
-- :since created at or after, or null
-- :until created before, or null
SELECT id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at,
       updated_at
FROM all_deliveries
WHERE (:subscription::uuid IS NULL OR subscription_id = :subscription)
  AND (:status::text IS NULL OR status = :status) AND (:plant::bigint IS NULL OR plant_id = :plant)
  AND seq < coalesce(:before::bigint, 9223372036854775807)
  AND (:since::timestamptz IS NULL OR created_at >= :since) AND (:until::timestamptz IS NULL OR created_at < :until)
ORDER BY seq DESC LIMIT :limit;

-- @name find-delivery
-- One delivery with its body and attempt log, wherever it is (all_deliveries). A delivery that succeeded at once
-- has no body of its own: its event's outbox row holds it. Sent by DeliveryRepository.findById.
-- :id the delivery's id
SELECT d.id, d.seq, d.subscription_id, d.event_id, d.plant_id, d.event_type, d.status, d.attempts, d.next_attempt_at,
       d.created_at, d.updated_at, d.attempt_log, coalesce(d.body, e.body) AS body, d.hops, d.origin_event_id,
         coalesce(s.token IS NOT NULL, false) AS has_token, coalesce(s.headers, '{}') AS custom_headers,
         ARRAY(SELECT jsonb_object_keys(s.secret_headers) ORDER BY 1) AS secret_header_names, d.backfill_id
  FROM all_deliveries d LEFT JOIN subscriptions s ON s.id = d.subscription_id
  LEFT JOIN outbox_events e ON d.body IS NULL AND e.event_id = d.event_id
  WHERE d.id = :id;

-- @name retry-failed-delivery
-- A failed delivery back to pending, for one more attempt now (not one of a deleted subscription). Sent by
-- DeliveryRepository.retryFailed.
-- :id the delivery's id
UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
      replayed_from = NULL
  WHERE id = :id AND status = 'failed'
    AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = subscription_id AND s.deleted_at IS NOT NULL)
  RETURNING id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at,
            updated_at;

-- @name retry-failed-matching
-- Every failed delivery that matches back to pending, except those of deleted subscriptions. Sent by
-- DeliveryRepository.retryFailedMatching.
-- :subscription the filter's subscription, or null
-- :plant the filter's plant, or null
-- :since created at or after, or null
-- :until created before, or null
UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
      replayed_from = NULL
  WHERE d.status = 'failed'
    AND (:subscription::uuid IS NULL OR d.subscription_id = :subscription)
    AND (:plant::bigint IS NULL OR d.plant_id = :plant)
    AND (:since::timestamptz IS NULL OR d.created_at >= :since)
    AND (:until::timestamptz IS NULL OR d.created_at < :until)
    AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NOT NULL)
  RETURNING d.id, d.subscription_id;

-- @name count-deliveries-by-status
-- Deliveries created in the window, by status (bounded by the created_at BRIN indexes and the log's partitions).
-- Sent by DeliveryRepository.countByStatus.
-- :hours the window, hours back from now
SELECT status, count(*)::int AS n FROM all_deliveries WHERE created_at >= now() - :hours * interval '1 hour'
  GROUP BY status;

-- @name deliveries-per-minute
-- Events stored, deliveries succeeded and failed for good, per minute of the window (zeros included). Sent by
-- DeliveryRepository.perMinute.
-- :minutes the window, minutes back from now
WITH m AS (
  SELECT generate_series(date_trunc('minute', now()) - (:minutes - 1) * interval '1 minute',
                         date_trunc('minute', now()), interval '1 minute') AS minute
), e AS (
  SELECT date_trunc('minute', processed_at) AS minute, count(*)::int AS n FROM processed_events
  WHERE processed_at >= now() - :minutes * interval '1 minute' GROUP BY 1
), d AS (
  SELECT date_trunc('minute', updated_at) AS minute,
         count(*) FILTER (WHERE status = 'succeeded')::int AS delivered,
         count(*) FILTER (WHERE status = 'failed')::int AS failed
  FROM all_deliveries WHERE created_at >= now() - :minutes * interval '1 minute' AND status <> 'pending' GROUP BY 1
)
SELECT m.minute, coalesce(e.n, 0) AS accepted, coalesce(d.delivered, 0) AS delivered,
       coalesce(d.failed, 0) AS failed
FROM m LEFT JOIN e USING (minute) LEFT JOIN d USING (minute) ORDER BY m.minute;

-- @name retry-failed-since
-- A subscription's failed deliveries created since a time, back to pending (recover, `status=failed`: as retry, no
-- replay mark, so per-plant order is not checked against newer versions; see replay-since for that). Sent by
-- DeliveryRepository.retryFailedSince.
-- :subscription the subscription
-- :since created at or after
UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
      replayed_from = NULL
  WHERE subscription_id = :subscription AND status = 'failed' AND created_at >= :since;

-- @name replay-since
-- One batch of a replay of everything since a time (recover, `status=all`): the subscription's New Plant deliveries
-- whose event is at or after `:since` and that are not pending (succeeded, or failed for good), wherever they are,
-- sent again with their `webhook-id` (their event's id) and attempt log. A mutable row goes back to pending; a row
-- of the append-only log (succeeded at once) moves back to deliveries, with its id, seq, attempts and its event's
-- body (the only delete the log sees but a day's partition dropped, and only on an operator's request). Each is
-- marked with what it was (`replayed_from`): the claim sends it only while its plant has no newer version that went
-- meanwhile (replayCurrent), as a backfill's row. They keep their seq, so per-plant order sends a plant's replayed
-- versions oldest first, and a live delivery of the plant written meanwhile waits behind them. Due after
-- `:settleMs` ms, like a backfill's rows: an ingest statement that began before this one committed (and sends a
-- newer version from memory without seeing these rows) has ended by then, so the claim sees the newer version.
-- Bounded: looks at `:scan` of the subscription's deliveries (by its (subscription, seq) indexes: never another
-- subscriber's; numbered after the cursor `:afterSeq`, created from a minute before `:since` on: the log's earlier
-- days are not read) and re-queues `:limit` at most, in seq order; the cursor it returns is where the next batch
-- starts. A backfill's rows are left out (a backfill is asked for again), and so is a log row whose event's body is
-- gone (retention: nothing left to send). Sent by DeliveryRepository.replaySince.
-- :subscription the subscription
-- :since the event's time, at or after
-- :afterSeq the cursor: the last seq looked at (0 at the start)
-- :limit how many to re-queue at most
-- :scan how many deliveries to look at at most
-- :settleMs the wait before the first is due, ms
WITH scanned AS MATERIALIZED (
  SELECT a.id, a.seq, a.subscription_id, a.event_id, a.event_type, a.backfill_id, a.status, a.event_time, a.appended,
         a.created_at
  FROM all_deliveries a
  WHERE a.subscription_id = :subscription AND a.seq > :afterSeq
    AND a.created_at >= :since::timestamptz - interval '1 minute'
  ORDER BY a.seq LIMIT :scan
), matched AS MATERIALIZED (
  SELECT x.*, row_number() OVER (ORDER BY x.seq) AS n FROM scanned x
  WHERE x.subscription_id = :subscription AND x.event_type IS NULL AND x.backfill_id IS NULL AND x.status <> 'pending'
    AND x.event_time >= :since
    AND (NOT x.appended OR EXISTS (SELECT 1 FROM outbox_events e WHERE e.event_id = x.event_id))
), taken AS (
  SELECT * FROM matched WHERE n <= :limit
), requeued AS (
  UPDATE deliveries d SET replayed_from = d.status, status = 'pending',
         next_attempt_at = now() + :settleMs * interval '1 millisecond', leased_until = NULL, lease_token = NULL,
         updated_at = now()
  FROM taken t
  WHERE NOT t.appended AND d.id = t.id AND d.status <> 'pending'
  RETURNING d.id
), moved AS (
  DELETE FROM delivery_log l USING taken t
  WHERE t.appended AND l.id = t.id AND l.created_at = t.created_at
    AND l.created_at >= :since::timestamptz - interval '1 minute'
  RETURNING l.*
), reinserted AS (
  INSERT INTO deliveries (id, seq, subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                          traceparent, status, attempts, attempt_log, next_attempt_at, created_at, updated_at,
                          replayed_from)
  OVERRIDING SYSTEM VALUE
  SELECT m.id, m.seq, m.subscription_id, m.event_id, m.plant_id, e.body, m.event_time, m.hops, m.origin_event_id,
         m.traceparent, 'pending', m.attempts, m.attempt_log, now() + :settleMs * interval '1 millisecond',
         m.created_at,
         now(), 'succeeded'
  FROM moved m JOIN outbox_events e ON e.event_id = m.event_id
  ORDER BY m.seq
  RETURNING 1
)
SELECT (SELECT count(*) FROM requeued)::int + (SELECT count(*) FROM reinserted)::int AS requeued,
       (SELECT count(*) FROM reinserted)::int AS moved, (SELECT count(*) FROM scanned)::int AS looked_at,
       coalesce(CASE WHEN (SELECT count(*) FROM matched) > :limit THEN (SELECT max(seq) FROM taken)
                     ELSE (SELECT max(seq) FROM scanned) END, :afterSeq) AS cursor,
       (SELECT count(*) FROM scanned) < :scan AND (SELECT count(*) FROM matched) <= :limit AS exhausted;

-- @name hold-replay
-- Takes a subscription's replay hold for `:forMs` ms, unless another holder has it and its time has not run out.
-- `taken`: the hold's end when taken, else null; `held`: the end of the hold there was before (the snapshot the
-- statement reads), which a refused caller waits for. Sent by DeliveryRepository.holdReplay.
-- :subscription the subscription
-- :holder the holder (a fresh uuid per call)
-- :forMs how long at most, ms
WITH taken AS (
  INSERT INTO subscription_replays AS r (subscription_id, holder, until)
  VALUES (:subscription, :holder, now() + :forMs * interval '1 millisecond')
  ON CONFLICT (subscription_id) DO UPDATE SET holder = excluded.holder, until = excluded.until WHERE r.until <= now()
  RETURNING r.until
)
SELECT (SELECT until FROM taken) AS taken,
       (SELECT until FROM subscription_replays WHERE subscription_id = :subscription) AS held;

-- @name release-replay
-- Gives a replay hold back (only the holder's own: one that ran out may be another's by now). Sent by
-- DeliveryRepository.releaseReplay.
-- :subscription the subscription
-- :holder the holder
DELETE FROM subscription_replays WHERE subscription_id = :subscription AND holder = :holder;
