// Operational webhooks: Plant Store's own events (OperationalEventType in @app/contracts), each written once, by
// the statement that makes the change it reports, as one pending delivery per operational subscriber; the
// dispatcher then sends, retries, records and lists them like any delivery. The rule is operational_deliveries
// (migration 34): a statement in a .sql file writes its rows in a data-modifying CTE, as dead-letters.sql does;
// one still in TypeScript ends its WITH list with `operationalEvents(source)`, where `source` is a SELECT
// yielding (type text, subscription_id uuid, data jsonb): `subscription_id` is the subscription the event is about
// (that subscription is not told about itself), or null. From TypeScript, OPERATIONAL_EVENTS.emit (one INSERT).

/** An instant as the events carry it (event_time_text, migration 34). */
export const isoTime = (t: string) => `event_time_text(${t})`;

/**
 * `op_deliveries`: the pending deliveries of the events `source` yields (type text, subscription_id uuid, data
 * jsonb), one per operational subscriber that takes each (operational_deliveries, migration 34, holds the rule).
 */
export const operationalEvents = (source: string) => `op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (${source}) x))
  RETURNING 1
)`;

/** subscription.disabled, from rows (id, disabled_reason) of subscriptions just disabled. */
export const subscriptionDisabledEvents = (disabled: string) => `
  SELECT e.* FROM ${disabled} x, subscription_disabled_event(x.id, x.disabled_reason) e`;

/** How long one delivery.exhausted about a subscription stands for the others (docs/delivery.md, Operational webhooks). */
const EXHAUSTED_NOTICE_WINDOW = "interval '60 seconds'";

/**
 * New Plant deliveries that failed for good by an attempt (their attempts ran out, or the subscriber said 410
 * Gone), and whether each one's subscription is told now. Two CTEs: `exhausted`, the rows of `source`, which yields
 * (delivery_id, subscription_id, event_id, plant_id, attempts, attempted_at, http_status, error) for those rows
 * only; `exhausted_notices`, a row per subscription among them, `notify` when no notice about it went out within
 * the window, with `reported`: how many were held back since the previous one. Coalesced (issue #36): a portal
 * link replaying a failing endpoint's deliveries would otherwise page every operator once per delivery. In
 * subscription order, so two statements that take the same notices' locks take them in the same order.
 */
export const exhaustedNotices = (source: string) => `exhausted AS MATERIALIZED (
  SELECT * FROM ${source} x
), exhausted_notices AS (
  INSERT INTO operational_notices AS o (subscription_id, type, window_ends, held, reported)
  SELECT subscription_id, 'delivery.exhausted', now() + ${EXHAUSTED_NOTICE_WINDOW}, count(*) - 1, 0
  FROM exhausted GROUP BY subscription_id ORDER BY subscription_id
  ON CONFLICT (subscription_id, type) DO UPDATE SET
    reported = CASE WHEN o.window_ends <= now() THEN o.held ELSE o.reported END,
    held = CASE WHEN o.window_ends <= now() THEN excluded.held ELSE o.held + excluded.held + 1 END,
    window_ends = CASE WHEN o.window_ends <= now() THEN excluded.window_ends ELSE o.window_ends END
  RETURNING o.subscription_id, o.reported, o.window_ends = now() + ${EXHAUSTED_NOTICE_WINDOW} AS notify
)`;

/**
 * delivery.exhausted, one per subscription told now (see exhaustedNotices, whose CTEs it reads): its first
 * delivery that failed for good, and `heldBack`. An operational delivery that fails never makes one: an operator
 * endpoint that is down would otherwise be told about itself, without end.
 */
export const deliveryExhaustedEvents = () => `(
  SELECT DISTINCT ON (x.subscription_id) 'delivery.exhausted'::text AS type, NULL::uuid AS subscription_id,
         jsonb_build_object('deliveryId', x.delivery_id, 'subscriptionId', x.subscription_id, 'eventId', x.event_id,
           'plantId', x.plant_id, 'attempts', x.attempts,
           'lastAttempt', jsonb_build_object('attemptedAt', ${isoTime('x.attempted_at')}, 'status', x.http_status,
             'error', x.error), 'heldBack', n.reported) AS data
  FROM exhausted x JOIN exhausted_notices n ON n.subscription_id = x.subscription_id AND n.notify
  ORDER BY x.subscription_id, x.delivery_id)`;
