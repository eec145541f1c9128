import { statement } from '../sql/statement';

const LISTED_COLUMNS =
  'id, seq, subscription_id, event_id, plant_id, event_type, status, attempts, next_attempt_at, created_at, updated_at';
const columnsOf = (alias: string) =>
  LISTED_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/**
 * Newest first, one page, of every delivery: the mutable rows and the appended ones (all_deliveries), in the one
 * order of their shared seq, so a page and the next never skip nor repeat one across the two tables (a delivery is
 * in one of them, written once with its seq). Each table's seq index is read backwards and merged.
 */
export const LIST_DELIVERIES = statement({
  name: 'list-deliveries',
  runBy: 'DeliveryRepository.listNewest',
  params: [
    "the filter's subscription, or null",
    "the filter's status, or null",
    "the filter's plant, or null",
    'the page: rows numbered below this seq, or null for the newest',
    'how many rows at most',
    'created at or after, or null',
    'created before, or null',
  ],
  text: `SELECT ${LISTED_COLUMNS} FROM all_deliveries
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::text IS NULL OR status = $2)
         AND ($3::bigint IS NULL OR plant_id = $3) AND ($4::bigint IS NULL OR seq < $4)
         AND ($6::timestamptz IS NULL OR created_at >= $6) AND ($7::timestamptz IS NULL OR created_at < $7)
       ORDER BY seq DESC LIMIT $5`,
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
  text: `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
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
  text: `UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
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

/** A subscription's failed deliveries created since a time, back to pending. */
export const RETRY_FAILED_SINCE = statement({
  name: 'retry-failed-since',
  runBy: 'DeliveryRepository.retryFailedSince',
  params: ['the subscription', 'created at or after'],
  text: `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), leased_until = NULL, updated_at = now()
       WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2`,
});
