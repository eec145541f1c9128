import { matchesFilter, newPlantBody } from '../sql/fragments/outbox';
import { statement } from '../sql/statement';

const ACTIVE = `('running', 'cancelling')`;

/** The plants a backfill sends: those the subscription `s` would receive, changed since `since` (all when null). */
const wanted = (p: string, since: string) =>
  `(${since}::timestamptz IS NULL OR ${p}.updated_at >= ${since}) AND ${matchesFilter('s', `${p}.id`, `${p}.tag`)}`;

/**
 * A backfill, asked for now: how many plants it would send is counted as it starts (a plant stored meanwhile with
 * a higher id is sent too). One active backfill per subscription (a unique index): a second one is refused.
 */
export const CREATE_BACKFILL = statement({
  name: 'create-backfill',
  runBy: 'BackfillRepository.create',
  params: ['the subscription', 'only plants changed since, or null', 'deliveries per second', 'who asked (actor)'],
  text: `WITH s AS (SELECT * FROM subscriptions WHERE id = $1 AND deleted_at IS NULL)
       INSERT INTO backfills (subscription_id, since, rate_per_second, total, created_by)
       SELECT s.id, $2, $3, (SELECT count(*) FROM plants p WHERE ${wanted('p', '$2')}), $4 FROM s
       RETURNING *`,
});

export const LIST_BACKFILLS = statement({
  name: 'list-backfills',
  runBy: 'BackfillRepository.list',
  params: ['the subscription'],
  text: 'SELECT * FROM backfills WHERE subscription_id = $1 ORDER BY created_at DESC, id LIMIT 100',
});

export const FIND_BACKFILL = statement({
  name: 'find-backfill',
  runBy: 'BackfillRepository.findById',
  params: ['its id', 'its subscription'],
  text: 'SELECT * FROM backfills WHERE id = $1 AND subscription_id = $2',
});

/** Stops it queueing; the worker that holds it drops what is unsent and marks it cancelled once none is in flight. */
export const CANCEL_BACKFILL = statement({
  name: 'cancel-backfill',
  runBy: 'BackfillRepository.cancel',
  params: ['its id', 'its subscription'],
  text: `UPDATE backfills SET state = 'cancelling', updated_at = now()
       WHERE id = $1 AND subscription_id = $2 AND state = 'running' RETURNING *`,
});

/**
 * Takes active backfills whose lease is free or lapsed (a crashed worker's), the one that waited longest first
 * (least recently advanced: a worker hands each back after a slice, so slots go round). A backfill whose
 * subscription is disabled is not taken until it is enabled again: it would hold a slot and queue nothing. One
 * that is stopping (cancelled, or its subscription deleted) is taken, to finish. The conditions are checked
 * again on each locked row (a replica may have taken it since this statement's snapshot).
 */
export const CLAIM_BACKFILLS = statement({
  name: 'claim-backfills',
  runBy: 'BackfillRepository.claim',
  params: ['how many at most', 'the lease, ms', "the lease's token"],
  text: `UPDATE backfills b SET leased_until = now() + $2 * interval '1 millisecond', lease_token = $3
       WHERE b.id IN (
         SELECT x.id FROM backfills x LEFT JOIN subscriptions s ON s.id = x.subscription_id
         WHERE x.state IN ${ACTIVE} AND (x.leased_until IS NULL OR x.leased_until < now())
           AND (x.state = 'cancelling' OR s.id IS NULL OR s.deleted_at IS NOT NULL OR s.enabled)
         ORDER BY x.updated_at LIMIT $1
         FOR UPDATE OF x SKIP LOCKED)
       RETURNING b.id, b.lease_token`,
});

/**
 * A tick's first statement: the backfill locked for the tick's transaction, if its lease (token) is still this
 * worker's, with its subscription's state. Nobody else changes it meanwhile (a cancel waits for the commit).
 */
export const LOCK_BACKFILL = statement({
  name: 'lock-backfill',
  runBy: 'BackfillRepository.tick',
  params: ['its id', "the lease's token"],
  text: `SELECT b.*, coalesce(s.enabled, false) AS subscription_enabled,
              s.id IS NULL OR s.deleted_at IS NOT NULL AS subscription_deleted
       FROM backfills b LEFT JOIN subscriptions s ON s.id = b.subscription_id
       WHERE b.id = $1 AND b.lease_token = $2 AND b.state IN ${ACTIVE}
       FOR UPDATE OF b`,
});

/**
 * Drops the backfill's pending rows that must not be sent, unless a claim holds them (in flight): those whose
 * plant changed since they were queued (backfillCurrent: a newer live event delivers it) and, when `$2`, all of
 * them (cancelled). Without this, a row that may not be claimed would hold back its plant's later deliveries.
 */
export const DROP_BACKFILL_ROWS = statement({
  name: 'drop-backfill-rows',
  runBy: 'BackfillRepository.tick',
  params: ['the backfill', 'whether to drop every unsent row (cancelled)'],
  text: `WITH gone AS (
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
       FROM gone`,
});

/**
 * Queues the next plants, by id from the cursor, as pending delivery rows of the subscriber: the plant as stored
 * now (its last event in `origin_event_id`, see backfillCurrent), a `webhook-id` of its own for each (backfill,
 * plant), due one after another at the backfill's rate once `$7` ms have passed. Those ms let every ingest
 * statement that began before this one commits end first (DATABASE_STATEMENT_TIMEOUT_MS bounds it): such a
 * statement may not see these rows, so a delivery of a newer version it sends from memory does not wait for
 * them; by the time they are due, the plant's change is visible and the claim leaves them. Looks at `$6` plants
 * at most, so a narrow filter costs a bounded tick; the cursor then moves past what was looked at.
 */
export const QUEUE_BACKFILL = statement({
  name: 'queue-backfill',
  runBy: 'BackfillRepository.tick',
  params: [
    'the backfill',
    'its subscription',
    'the cursor: the last plant id looked at, or null',
    'only plants changed since, or null',
    'how many to queue at most',
    'how many plants to look at at most',
    'the wait before the first is due, ms',
    'deliveries per second',
  ],
  text: `WITH s AS (SELECT * FROM subscriptions WHERE id = $2
), scanned AS MATERIALIZED (
  SELECT p.* FROM plants p WHERE ($3::bigint IS NULL OR p.id > $3) ORDER BY p.id LIMIT $6
), matched AS MATERIALIZED (
  SELECT p.*, row_number() OVER (ORDER BY p.id) AS n FROM scanned p, s WHERE ${wanted('p', '$4')}
), taken AS (
  SELECT * FROM matched WHERE n <= $5
), queued AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                          next_attempt_at, backfill_id)
  SELECT $2, md5('backfill:' || $1::uuid::text || ':' || t.id)::uuid::text, t.id, ${newPlantBody('t')}, due.at, 0,
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
       (SELECT count(*) FROM scanned) < $6 AND (SELECT count(*) FROM matched) <= $5 AS exhausted`,
});

/**
 * A tick's last statement: what it did, the pending rows counted again (in flight included), the lease renewed,
 * and the end once nothing is left in flight: completed when every plant was queued, cancelled when asked to
 * stop (or its subscription was deleted).
 */
export const ADVANCE_BACKFILL = statement({
  name: 'advance-backfill',
  runBy: 'BackfillRepository.tick',
  params: [
    'the backfill',
    'the new cursor',
    'whether every plant is queued now',
    'rows queued by this tick',
    'rows dropped as superseded',
    'rows dropped unsent (cancelled)',
    'whether it is to stop (cancelled, or its subscription deleted)',
    'the lease, ms',
  ],
  text: `WITH counted AS (
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
       RETURNING b.state`,
});

/**
 * Hands backfills back while this worker's lease still holds them, for another worker (or this one's next claim)
 * to go on: at shutdown, at the end of a slice, and when a backfill's subscription is disabled.
 */
export const RELEASE_BACKFILLS = statement({
  name: 'release-backfills',
  runBy: 'BackfillRepository.release',
  params: ['their ids', 'their lease tokens'],
  text: `UPDATE backfills b SET leased_until = NULL, lease_token = NULL
       FROM unnest($1::uuid[], $2::uuid[]) AS r(id, lease_token)
       WHERE b.id = r.id AND b.lease_token = r.lease_token`,
});
