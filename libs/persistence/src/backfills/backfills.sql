-- Backfills: the current state of every plant a subscription would receive, sent to it at a rate, one active backfill
-- per subscription. The plants it sends are those its filter takes (plant_matches_filter, migration 33) changed since
-- its since (all when null); each as new_plant_body makes it.

-- @name create-backfill
-- A backfill, asked for now: how many plants it would send is counted as it starts (a plant stored meanwhile with a
-- higher id is sent too). One active backfill per subscription (a unique index): a second one is refused. Sent by
-- BackfillRepository.create.
-- :subscription the subscription
-- :since only plants changed since, or null
-- :ratePerSecond deliveries per second
-- :actor who asked (actor)
WITH s AS (SELECT * FROM subscriptions WHERE id = :subscription AND deleted_at IS NULL)
INSERT INTO backfills (subscription_id, since, rate_per_second, total, created_by)
SELECT s.id, :since, :ratePerSecond,
       (SELECT count(*) FROM plants p
        WHERE (:since::timestamptz IS NULL OR p.updated_at >= :since)
          AND plant_matches_filter(s.filter, p.id, p.tag)),
       :actor
FROM s
RETURNING *;

-- @name list-backfills
-- Sent by BackfillRepository.list.
-- :subscription the subscription
SELECT * FROM backfills WHERE subscription_id = :subscription ORDER BY created_at DESC, id LIMIT 100;

-- @name find-backfill
-- Sent by BackfillRepository.findById.
-- :id its id
-- :subscription its subscription
SELECT * FROM backfills WHERE id = :id AND subscription_id = :subscription;

-- @name cancel-backfill
-- Stops it queueing; the worker that holds it drops what is unsent and marks it cancelled once none is in flight.
-- Sent by BackfillRepository.cancel.
-- :id its id
-- :subscription its subscription
UPDATE backfills SET state = 'cancelling', updated_at = now()
  WHERE id = :id AND subscription_id = :subscription AND state = 'running' RETURNING *;

-- @name claim-backfills
-- Takes active backfills whose lease is free or lapsed (a crashed worker's), the one that waited longest first
-- (least recently advanced: a worker hands each back after a slice, so slots go round). A backfill whose
-- subscription is disabled is not taken until it is enabled again: it would hold a slot and queue nothing. One that
-- is stopping (cancelled, or its subscription deleted) is taken, to finish. The conditions are checked again on
-- each locked row (a replica may have taken it since this statement's snapshot). Sent by BackfillRepository.claim.
-- :limit how many at most
-- :leaseMs the lease, ms
-- :leaseToken the lease's token
UPDATE backfills b SET leased_until = now() + :leaseMs * interval '1 millisecond', lease_token = :leaseToken
  WHERE b.id IN (
    SELECT x.id FROM backfills x LEFT JOIN subscriptions s ON s.id = x.subscription_id
    WHERE x.state IN ('running', 'cancelling') AND (x.leased_until IS NULL OR x.leased_until < now())
      AND (x.state = 'cancelling' OR s.id IS NULL OR s.deleted_at IS NOT NULL OR s.enabled)
    ORDER BY x.updated_at LIMIT :limit
    FOR UPDATE OF x SKIP LOCKED)
  RETURNING b.id, b.lease_token;

-- @name lock-backfill
-- A tick's first statement: the backfill locked for the tick's transaction, if its lease (token) is still this
-- worker's, with its subscription's state. Nobody else changes it meanwhile (a cancel waits for the commit). Sent
-- by BackfillRepository.tick.
-- :id its id
-- :leaseToken the lease's token
SELECT b.*, coalesce(s.enabled, false) AS subscription_enabled,
         s.id IS NULL OR s.deleted_at IS NOT NULL AS subscription_deleted
  FROM backfills b LEFT JOIN subscriptions s ON s.id = b.subscription_id
  WHERE b.id = :id AND b.lease_token = :leaseToken AND b.state IN ('running', 'cancelling')
  FOR UPDATE OF b;

-- @name drop-backfill-rows
-- Drops the backfill's pending rows that must not be sent, unless a claim holds them (in flight): those whose plant
-- changed since they were queued (backfillCurrent: a newer live event delivers it) and, when `:dropAll`, all of them
-- (cancelled). Without this, a row that may not be claimed would hold back its plant's later deliveries. Sent by
-- BackfillRepository.tick.
-- :backfill the backfill
-- :dropAll whether to drop every unsent row (cancelled)
WITH gone AS (
  DELETE FROM deliveries d WHERE d.id IN (
    SELECT x.id FROM deliveries x
    WHERE x.backfill_id = :backfill AND x.status = 'pending' AND (x.leased_until IS NULL OR x.leased_until < now())
    FOR UPDATE SKIP LOCKED)
  AND (:dropAll::boolean OR NOT EXISTS (
    SELECT 1 FROM plants p WHERE p.id = d.plant_id AND p.last_event_id = d.origin_event_id))
  RETURNING EXISTS (
    SELECT 1 FROM plants p WHERE p.id = d.plant_id AND p.last_event_id = d.origin_event_id) AS current
)
SELECT count(*) FILTER (WHERE NOT current)::int AS superseded, count(*) FILTER (WHERE current)::int AS dropped
FROM gone;

-- @name queue-backfill
-- Queues the next plants, by id from the cursor, as pending delivery rows of the subscriber: the plant as stored
-- now (its last event in `origin_event_id`, see backfillCurrent), a `webhook-id` of its own for each (backfill,
-- plant), due one after another at the backfill's rate once `:settleMs` ms have passed. Those ms let every ingest
-- statement that began before this one commits end first (DATABASE_STATEMENT_TIMEOUT_MS bounds it): such a
-- statement may not see these rows, so a delivery of a newer version it sends from memory does not wait for them;
-- by the time they are due, the plant's change is visible and the claim leaves them. Looks at `:scan` plants at most,
-- so a narrow filter costs a bounded tick; the cursor then moves past what was looked at. Sent by
-- BackfillRepository.tick.
-- :backfill the backfill
-- :subscription its subscription
-- :afterPlant the cursor: the last plant id looked at, or null
-- :since only plants changed since, or null
-- :limit how many to queue at most
-- :scan how many plants to look at at most
-- :settleMs the wait before the first is due, ms
-- :ratePerSecond deliveries per second
WITH s AS (SELECT * FROM subscriptions WHERE id = :subscription
), scanned AS MATERIALIZED (
  SELECT p.* FROM plants p WHERE (:afterPlant::bigint IS NULL OR p.id > :afterPlant) ORDER BY p.id LIMIT :scan
), matched AS MATERIALIZED (
  SELECT p.*, row_number() OVER (ORDER BY p.id) AS n FROM scanned p, s
  WHERE (:since::timestamptz IS NULL OR p.updated_at >= :since) AND plant_matches_filter(s.filter, p.id, p.tag)
), taken AS (
  SELECT * FROM matched WHERE n <= :limit
), queued AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                          next_attempt_at, backfill_id)
  SELECT :subscription, md5('backfill:' || :backfill::uuid::text || ':' || t.id)::uuid::text, t.id,
         new_plant_body(t.extra, t.id, t.name, t.tag), due.at, 0,
         t.last_event_id, due.at, :backfill::uuid
  FROM taken t,
       LATERAL (SELECT now() + (:settleMs::float8 + (t.n - 1) * 1000.0 / :ratePerSecond::float8)
                         * interval '1 millisecond' AS at) due
  ORDER BY t.id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM queued)::int AS queued,
       CASE WHEN (SELECT count(*) FROM matched) > :limit THEN (SELECT max(id) FROM taken)
            ELSE coalesce((SELECT max(id) FROM scanned), :afterPlant) END AS cursor,
       (SELECT count(*) FROM scanned) < :scan AND (SELECT count(*) FROM matched) <= :limit AS exhausted;

-- @name advance-backfill
-- A tick's last statement: what it did, the pending rows counted again (in flight included), the lease renewed, and
-- the end once nothing is left in flight: completed when every plant was queued, cancelled when asked to stop (or
-- its subscription was deleted). Sent by BackfillRepository.tick.
-- :backfill the backfill
-- :cursor the new cursor
-- :complete whether every plant is queued now
-- :queued rows queued by this tick
-- :superseded rows dropped as superseded
-- :dropped rows dropped unsent (cancelled)
-- :stop whether it is to stop (cancelled, or its subscription deleted)
-- :leaseMs the lease, ms
WITH counted AS (
  SELECT count(*)::int AS pending FROM deliveries WHERE backfill_id = :backfill AND status = 'pending'
), next AS (
  SELECT CASE WHEN counted.pending > 0 THEN b.state
              WHEN :stop::boolean THEN 'cancelled' WHEN :complete::boolean THEN 'completed' ELSE b.state END AS state,
         counted.pending
  FROM backfills b, counted WHERE b.id = :backfill
)
UPDATE backfills b SET after_plant_id = :cursor::bigint, exhausted = :complete, queued = b.queued + :queued::int,
       superseded = b.superseded + :superseded::int, dropped = b.dropped + :dropped::int, pending = next.pending,
       updated_at = now(),
       state = CASE WHEN :stop::boolean AND next.state = 'running' THEN 'cancelling' ELSE next.state END,
       finished_at = CASE WHEN next.state IN ('completed', 'cancelled') THEN now() END,
       leased_until = CASE WHEN next.state IN ('completed', 'cancelled') THEN NULL
                      ELSE now() + :leaseMs * interval '1 millisecond' END,
       lease_token = CASE WHEN next.state IN ('completed', 'cancelled') THEN NULL ELSE b.lease_token END
FROM next WHERE b.id = :backfill
RETURNING b.state;

-- @name release-backfills
-- Hands backfills back while this worker's lease still holds them, for another worker (or this one's next claim) to
-- go on: at shutdown, at the end of a slice, and when a backfill's subscription is disabled. Sent by
-- BackfillRepository.release.
-- :ids their ids
-- :leaseTokens their lease tokens
UPDATE backfills b SET leased_until = NULL, lease_token = NULL
  FROM unnest(:ids::uuid[], :leaseTokens::uuid[]) AS r(id, lease_token)
  WHERE b.id = r.id AND b.lease_token = r.lease_token;
