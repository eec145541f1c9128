-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every backfills statement the repositories send, exactly as sent, with what each parameter means.

-- create-backfill
-- Sent by BackfillRepository.create.
-- $1: the subscription
-- $2: only plants changed since, or null
-- $3: deliveries per second
-- $4: who asked (actor)
WITH s AS (SELECT * FROM subscriptions WHERE id = $1 AND deleted_at IS NULL)
       INSERT INTO backfills (subscription_id, since, rate_per_second, total, created_by)
       SELECT s.id, $2, $3, (SELECT count(*) FROM plants p WHERE ($2::timestamptz IS NULL OR p.updated_at >= $2) AND 
  (NOT s.filter ? 'tags' OR coalesce(s.filter->'tags' ? p.tag, false))
  AND (s.filter #>> '{plantIds,min}' IS NULL OR p.id >= (s.filter #>> '{plantIds,min}')::bigint)
  AND (s.filter #>> '{plantIds,max}' IS NULL OR p.id <= (s.filter #>> '{plantIds,max}')::bigint)), $4 FROM s
       RETURNING *;

-- list-backfills
-- Sent by BackfillRepository.list.
-- $1: the subscription
SELECT * FROM backfills WHERE subscription_id = $1 ORDER BY created_at DESC, id LIMIT 100;

-- find-backfill
-- Sent by BackfillRepository.findById.
-- $1: its id
-- $2: its subscription
SELECT * FROM backfills WHERE id = $1 AND subscription_id = $2;

-- cancel-backfill
-- Sent by BackfillRepository.cancel.
-- $1: its id
-- $2: its subscription
UPDATE backfills SET state = 'cancelling', updated_at = now()
       WHERE id = $1 AND subscription_id = $2 AND state = 'running' RETURNING *;

-- claim-backfills
-- Sent by BackfillRepository.claim.
-- $1: how many at most
-- $2: the lease, ms
-- $3: the lease's token
UPDATE backfills b SET leased_until = now() + $2 * interval '1 millisecond', lease_token = $3
       WHERE b.id IN (
         SELECT x.id FROM backfills x LEFT JOIN subscriptions s ON s.id = x.subscription_id
         WHERE x.state IN ('running', 'cancelling') AND (x.leased_until IS NULL OR x.leased_until < now())
           AND (x.state = 'cancelling' OR s.id IS NULL OR s.deleted_at IS NOT NULL OR s.enabled)
         ORDER BY x.updated_at LIMIT $1
         FOR UPDATE OF x SKIP LOCKED)
       RETURNING b.id, b.lease_token;

-- lock-backfill
-- Sent by BackfillRepository.tick.
-- $1: its id
-- $2: the lease's token
SELECT b.*, coalesce(s.enabled, false) AS subscription_enabled,
              s.id IS NULL OR s.deleted_at IS NOT NULL AS subscription_deleted
       FROM backfills b LEFT JOIN subscriptions s ON s.id = b.subscription_id
       WHERE b.id = $1 AND b.lease_token = $2 AND b.state IN ('running', 'cancelling')
       FOR UPDATE OF b;

-- drop-backfill-rows
-- Sent by BackfillRepository.tick.
-- $1: the backfill
-- $2: whether to drop every unsent row (cancelled)
WITH gone AS (
         DELETE FROM deliveries d WHERE d.id IN (
           SELECT x.id FROM deliveries x
           WHERE x.backfill_id = $1 AND x.status = 'pending' AND (x.leased_until IS NULL OR x.leased_until < now())
           FOR UPDATE SKIP LOCKED)
         AND ($2::boolean OR NOT EXISTS (
           SELECT 1 FROM plants p WHERE p.id = d.plant_id AND p.last_event_id = d.origin_event_id))
         RETURNING EXISTS (
           SELECT 1 FROM plants p WHERE p.id = d.plant_id AND p.last_event_id = d.origin_event_id) AS current
       )
       SELECT count(*) FILTER (WHERE NOT current)::int AS superseded, count(*) FILTER (WHERE current)::int AS dropped
       FROM gone;

-- queue-backfill
-- Sent by BackfillRepository.tick.
-- $1: the backfill
-- $2: its subscription
-- $3: the cursor: the last plant id looked at, or null
-- $4: only plants changed since, or null
-- $5: how many to queue at most
-- $6: how many plants to look at at most
-- $7: the wait before the first is due, ms
-- $8: deliveries per second
WITH s AS (SELECT * FROM subscriptions WHERE id = $2
), scanned AS MATERIALIZED (
  SELECT p.* FROM plants p WHERE ($3::bigint IS NULL OR p.id > $3) ORDER BY p.id LIMIT $6
), matched AS MATERIALIZED (
  SELECT p.*, row_number() OVER (ORDER BY p.id) AS n FROM scanned p, s WHERE ($4::timestamptz IS NULL OR p.updated_at >= $4) AND 
  (NOT s.filter ? 'tags' OR coalesce(s.filter->'tags' ? p.tag, false))
  AND (s.filter #>> '{plantIds,min}' IS NULL OR p.id >= (s.filter #>> '{plantIds,min}')::bigint)
  AND (s.filter #>> '{plantIds,max}' IS NULL OR p.id <= (s.filter #>> '{plantIds,max}')::bigint)
), taken AS (
  SELECT * FROM matched WHERE n <= $5
), queued AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                          next_attempt_at, backfill_id)
  SELECT $2, md5('backfill:' || $1::uuid::text || ':' || t.id)::uuid::text, t.id, (t.extra || jsonb_strip_nulls(jsonb_build_object('id', t.id, 'name', t.name, 'tag', t.tag)))::text, due.at, 0,
         t.last_event_id, due.at, $1::uuid
  FROM taken t,
       LATERAL (SELECT now() + ($7::float8 + (t.n - 1) * 1000.0 / $8::float8) * interval '1 millisecond' AS at) due
  ORDER BY t.id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM queued)::int AS queued,
       CASE WHEN (SELECT count(*) FROM matched) > $5 THEN (SELECT max(id) FROM taken)
            ELSE coalesce((SELECT max(id) FROM scanned), $3) END AS cursor,
       (SELECT count(*) FROM scanned) < $6 AND (SELECT count(*) FROM matched) <= $5 AS exhausted;

-- advance-backfill
-- Sent by BackfillRepository.tick.
-- $1: the backfill
-- $2: the new cursor
-- $3: whether every plant is queued now
-- $4: rows queued by this tick
-- $5: rows dropped as superseded
-- $6: rows dropped unsent (cancelled)
-- $7: whether it is to stop (cancelled, or its subscription deleted)
-- $8: the lease, ms
WITH counted AS (
         SELECT count(*)::int AS pending FROM deliveries WHERE backfill_id = $1 AND status = 'pending'
       ), next AS (
         SELECT CASE WHEN counted.pending > 0 THEN b.state
                     WHEN $7::boolean THEN 'cancelled' WHEN $3::boolean THEN 'completed' ELSE b.state END AS state,
                counted.pending
         FROM backfills b, counted WHERE b.id = $1
       )
       UPDATE backfills b SET after_plant_id = $2::bigint, exhausted = $3, queued = b.queued + $4::int,
              superseded = b.superseded + $5::int, dropped = b.dropped + $6::int, pending = next.pending,
              updated_at = now(),
              state = CASE WHEN $7::boolean AND next.state = 'running' THEN 'cancelling' ELSE next.state END,
              finished_at = CASE WHEN next.state IN ('completed', 'cancelled') THEN now() END,
              leased_until = CASE WHEN next.state IN ('completed', 'cancelled') THEN NULL
                             ELSE now() + $8 * interval '1 millisecond' END,
              lease_token = CASE WHEN next.state IN ('completed', 'cancelled') THEN NULL ELSE b.lease_token END
       FROM next WHERE b.id = $1
       RETURNING b.state;

-- release-backfills
-- Sent by BackfillRepository.release.
-- $1: their ids
-- $2: their lease tokens
UPDATE backfills b SET leased_until = NULL, lease_token = NULL
       FROM unnest($1::uuid[], $2::uuid[]) AS r(id, lease_token)
       WHERE b.id = r.id AND b.lease_token = r.lease_token;
