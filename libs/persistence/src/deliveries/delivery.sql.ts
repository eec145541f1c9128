import { statement } from '../sql/statement';

const LISTED_COLUMNS =
  'id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at';
const columnsOf = (alias: string) =>
  LISTED_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** The filters both lists take besides the subscription ($2–$7), and their order: newest first by seq. */
const LIST_FILTERS = `($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR plant_id = $3)
         AND seq < coalesce($4::bigint, 9223372036854775807)
         AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
       ORDER BY seq DESC LIMIT $5`;
const LIST_PARAMS = [
  "the filter's status, or null",
  "the filter's plant, or null",
  'the page: rows numbered below this seq, or null for the newest',
  'how many rows at most',
  'created at or after, or null',
  'created before, or null',
];

/**
 * Newest first, one page, of every delivery: the mutable rows and the appended ones (all_deliveries), in the one
 * order of their shared seq, so a page and the next never skip nor repeat one across the two tables (a delivery is
 * in one of them, written once with its seq). Each table's seq index is read backwards and merged. `$1` is unused
 * (null): the parameters are LIST_SUBSCRIPTION_DELIVERIES', so both take the same values.
 */
export const LIST_DELIVERIES = statement({
  name: 'list-deliveries',
  runBy: 'DeliveryRepository.listNewest',
  params: ['unused: null (see LIST_SUBSCRIPTION_DELIVERIES)', ...LIST_PARAMS],
  text: `SELECT ${LISTED_COLUMNS} FROM all_deliveries
       WHERE $1::uuid IS NULL AND ${LIST_FILTERS}`,
});

/**
 * The same page of one subscription's deliveries: each table's (subscription, seq) index read backwards from the
 * page's seq, so it reads that subscription's rows alone, however many others have (a portal link lists its own).
 */
export const LIST_SUBSCRIPTION_DELIVERIES = statement({
  name: 'list-subscription-deliveries',
  runBy: 'DeliveryRepository.listNewest',
  params: ['the subscription', ...LIST_PARAMS],
  text: `SELECT ${LISTED_COLUMNS} FROM all_deliveries
       WHERE subscription_id = $1 AND ${LIST_FILTERS}`,
});

/**
 * One delivery with its body and attempt log, wherever it is (all_deliveries). A delivery that succeeded at once has
 * no body of its own: its event's outbox row holds it.
 */
export const FIND_DELIVERY = statement({
  name: 'find-delivery',
  runBy: 'DeliveryRepository.findById',
  params: ["the delivery's id"],
  text: `SELECT ${columnsOf('d')}, d.attempt_log, coalesce(d.body, e.body) AS body, d.hops, d.origin_event_id,
              coalesce(s.token IS NOT NULL, false) AS has_token, coalesce(s.headers, '{}') AS custom_headers,
              ARRAY(SELECT jsonb_object_keys(s.secret_headers) ORDER BY 1) AS secret_header_names, d.backfill_id
       FROM all_deliveries d LEFT JOIN subscriptions s ON s.id = d.subscription_id
       LEFT JOIN outbox_events e ON d.body IS NULL AND e.event_id = d.event_id
       WHERE d.id = $1`,
});

/** A failed delivery back to pending, for one more attempt now (not one of a deleted subscription). */
export const RETRY_FAILED_DELIVERY = statement({
  name: 'retry-failed-delivery',
  runBy: 'DeliveryRepository.retryFailed',
  params: ["the delivery's id"],
  text: `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
           replayed_from = NULL
       WHERE id = $1 AND status = 'failed'
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING ${LISTED_COLUMNS}`,
});

/** Every failed delivery that matches back to pending, except those of deleted subscriptions. */
export const RETRY_FAILED_MATCHING = statement({
  name: 'retry-failed-matching',
  runBy: 'DeliveryRepository.retryFailedMatching',
  params: [
    "the filter's subscription, or null",
    "the filter's plant, or null",
    'created at or after, or null',
    'created before, or null',
  ],
  text: `UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
           replayed_from = NULL
       WHERE d.status = 'failed'
         AND ($1::uuid IS NULL OR d.subscription_id = $1) AND ($2::bigint IS NULL OR d.plant_id = $2)
         AND ($3::timestamptz IS NULL OR d.created_at >= $3) AND ($4::timestamptz IS NULL OR d.created_at < $4)
         AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NOT NULL)
       RETURNING d.id, d.subscription_id`,
});

/** Deliveries created in the window, by status (bounded by the created_at BRIN indexes and the log's partitions). */
export const COUNT_DELIVERIES_BY_STATUS = statement({
  name: 'count-deliveries-by-status',
  runBy: 'DeliveryRepository.countByStatus',
  params: ['the window, hours back from now'],
  text: `SELECT status, count(*)::int AS n FROM all_deliveries WHERE created_at >= now() - $1 * interval '1 hour'
       GROUP BY status`,
});

/** Events stored, deliveries succeeded and failed for good, per minute of the window (zeros included). */
export const DELIVERIES_PER_MINUTE = statement({
  name: 'deliveries-per-minute',
  runBy: 'DeliveryRepository.perMinute',
  params: ['the window, minutes back from now'],
  text: `WITH m AS (
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
       FROM m LEFT JOIN e USING (minute) LEFT JOIN d USING (minute) ORDER BY m.minute`,
});

/**
 * A subscription's failed deliveries created since a time, back to pending (recover, `status=failed`: as retry, no
 * replay mark, so per-plant order is not checked against newer versions; see REPLAY_SINCE for that).
 */
export const RETRY_FAILED_SINCE = statement({
  name: 'retry-failed-since',
  runBy: 'DeliveryRepository.retryFailedSince',
  params: ['the subscription', 'created at or after'],
  text: `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now(),
           replayed_from = NULL
       WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2`,
});

/**
 * One batch of a replay of everything since a time (recover, `status=all`): the subscription's New Plant deliveries
 * whose event is at or after `$2` and that are not pending (succeeded, or failed for good), wherever they are, sent
 * again with their `webhook-id` (their event's id) and attempt log. A mutable row goes back to pending; a row of the
 * append-only log (succeeded at once) moves back to deliveries, with its id, seq, attempts and its event's body
 * (the only delete the log sees but a day's partition dropped, and only on an operator's request). Each is marked
 * with what it was (`replayed_from`): the claim sends it only while its plant has no newer version that went
 * meanwhile (replayCurrent), as a backfill's row. They keep their seq, so per-plant order sends a plant's replayed
 * versions oldest first, and a live delivery of the plant written meanwhile waits behind them. Due after `$6` ms,
 * like a backfill's rows: an ingest statement that began before this one committed (and sends a newer version from
 * memory without seeing these rows) has ended by then, so the claim sees the newer version.
 *
 * Bounded: looks at `$5` of the subscription's deliveries (by its (subscription, seq) indexes: never another
 * subscriber's; numbered after the cursor `$3`, created from a minute before `$2` on: the log's earlier days are not
 * read) and re-queues `$4` at most, in seq order; the cursor it returns is where the next batch starts. A backfill's rows are left out (a backfill is asked for again), and so
 * is a log row whose event's body is gone (retention: nothing left to send).
 */
export const REPLAY_SINCE = statement({
  name: 'replay-since',
  runBy: 'DeliveryRepository.replaySince',
  params: [
    'the subscription',
    "the event's time, at or after",
    'the cursor: the last seq looked at (0 at the start)',
    'how many to re-queue at most',
    'how many deliveries to look at at most',
    'the wait before the first is due, ms',
  ],
  text: `WITH scanned AS MATERIALIZED (
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
       (SELECT count(*) FROM scanned) < $5 AND (SELECT count(*) FROM matched) <= $4 AS exhausted`,
});

/**
 * Takes a subscription's replay hold for `$3` ms, unless another holder has it and its time has not run out.
 * `taken`: the hold's end when taken, else null; `held`: the end of the hold there was before (the snapshot the
 * statement reads), which a refused caller waits for.
 */
export const HOLD_REPLAY = statement({
  name: 'hold-replay',
  runBy: 'DeliveryRepository.holdReplay',
  params: ['the subscription', 'the holder (a fresh uuid per call)', 'how long at most, ms'],
  text: `WITH taken AS (
  INSERT INTO subscription_replays AS r (subscription_id, holder, until)
  VALUES ($1, $2, now() + $3 * interval '1 millisecond')
  ON CONFLICT (subscription_id) DO UPDATE SET holder = excluded.holder, until = excluded.until WHERE r.until <= now()
  RETURNING r.until
)
SELECT (SELECT until FROM taken) AS taken, (SELECT until FROM subscription_replays WHERE subscription_id = $1) AS held`,
});

/** Gives a replay hold back (only the holder's own: one that ran out may be another's by now). */
export const RELEASE_REPLAY = statement({
  name: 'release-replay',
  runBy: 'DeliveryRepository.releaseReplay',
  params: ['the subscription', 'the holder'],
  text: 'DELETE FROM subscription_replays WHERE subscription_id = $1 AND holder = $2',
});
