import { isoTime, operationalEvents, subscriptionDisabledEvents } from '../sql/fragments/operational';
import { auditWorkerDisabled } from '../sql/fragments/outbox';
import { statement } from '../sql/statement';

/** Milliseconds from now to a timestamp, by the database's clock (null stays null). */
const msFromNow = (t: string) => `(extract(epoch FROM ${t} - now()) * 1000)::float8`;

/**
 * A replica says it is alive, and reads what it needs to gate its sends: the live replicas (to split each limit
 * between them) and every subscriber with a limit, a pause, failures or a circuit not closed. Replicas not seen
 * for an hour are forgotten.
 */
export const HEARTBEAT = statement({
  name: 'subscriber-heartbeat',
  runBy: 'SubscriberHealthRepository.heartbeat',
  params: ["this replica's id", 'how recently a live replica was seen, ms'],
  text: `
WITH me AS (
  INSERT INTO worker_replicas (id, seen_at) VALUES ($1, now())
  ON CONFLICT (id) DO UPDATE SET seen_at = now()
  RETURNING 1
), forgotten AS (
  DELETE FROM worker_replicas WHERE seen_at < now() - interval '1 hour' RETURNING 1
)
SELECT (SELECT array_agg(id::text ORDER BY id::text) FROM (
          SELECT id FROM worker_replicas WHERE seen_at > now() - $2 * interval '1 millisecond' UNION SELECT $1::uuid
        ) live) AS replicas,
       g.*
FROM (SELECT 1) one LEFT JOIN (
  SELECT s.id AS subscription_id, s.max_deliveries_per_second, s.max_concurrency,
         CASE WHEN s.paused_until > now() THEN ${msFromNow('s.paused_until')} END AS paused_for_ms,
         s.circuit_state, ${msFromNow('s.circuit_probe_at')} AS probe_in_ms, s.consecutive_failures
  FROM subscriptions s
  WHERE s.enabled AND (s.max_deliveries_per_second IS NOT NULL OR s.max_concurrency IS NOT NULL
                       OR s.paused_until > now() OR s.circuit_state <> 'closed' OR s.consecutive_failures > 0)
) g ON true`,
});

export const LEAVE = statement({
  name: 'subscriber-heartbeat-leave',
  runBy: 'SubscriberHealthRepository.leave',
  params: ["this replica's id"],
  text: 'DELETE FROM worker_replicas WHERE id = $1',
});

/**
 * The subscriber asked to wait (429 or 503 with Retry-After): paused until then, never shortened by a shorter
 * answer that arrives meanwhile. The audit trail records a pause that starts, not each answer that extends it.
 */
export const PAUSE = statement({
  name: 'subscriber-pause',
  runBy: 'SubscriberHealthRepository.pause',
  params: ['its id', 'for how long, ms', 'why (the answer that asked)'],
  text: `
WITH old AS MATERIALIZED (
  SELECT id, coalesce(paused_until > now(), false) AS was_paused FROM subscriptions
  WHERE id = $1 AND enabled FOR UPDATE
), paused AS (
  UPDATE subscriptions s
  SET paused_until = greatest(coalesce(s.paused_until, now()), now() + $2 * interval '1 millisecond')
  FROM old WHERE s.id = old.id
  RETURNING s.id, s.paused_until, old.was_paused
), audited AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT 'worker', 'subscription.paused', id, jsonb_build_object('until', paused_until, 'reason', $3::text)
  FROM paused WHERE NOT was_paused
)
SELECT ${msFromNow('paused_until')} AS for_ms FROM paused`,
});

/**
 * Takes an open circuit's probe once its wait is over (or a half-open one whose probe's holder went quiet): the
 * replica whose statement changes the row sends the probe; the circuit is half-open until it is answered.
 */
export const START_PROBE = statement({
  name: 'subscriber-start-probe',
  runBy: 'SubscriberHealthRepository.startProbe',
  params: ['its id', 'how long the probe is held, ms'],
  text: `
UPDATE subscriptions SET circuit_state = 'half_open',
       circuit_probe_at = now() + $2 * interval '1 millisecond'
WHERE id = $1 AND enabled AND circuit_state IN ('open', 'half_open') AND circuit_probe_at <= now()
RETURNING id`,
});

/**
 * The breaker's one statement: a batch's outcomes per subscriber (failures after its last success, whether one
 * succeeded) move the consecutive-failure count and make every transition they call for, each written with an
 * audit event: a success closes the circuit; `failuresToOpen` consecutive failures open a closed one (the first
 * probe after probeMin); a failure while half-open is a failed probe (it opens again, waiting twice as long, at
 * most probeMax); a subscriber failing for `disableAfter` is disabled, with its reason, as a 410 disables one.
 */
export const RECORD_HEALTH = statement({
  name: 'subscriber-record-health',
  runBy: 'SubscriberHealthRepository.recordOutcomes',
  params: [
    'the subscriptions',
    'whether one of its deliveries succeeded in the batch',
    'its failures after the last success (all, if none)',
    'the last failure (storable text), or null',
    'consecutive failures that open the circuit',
    'the first probe wait, ms',
    'the longest probe wait, ms',
    'how long a subscriber may fail before it is disabled, ms',
  ],
  text: `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::boolean[], $3::int[], $4::text[])
    AS t(subscription_id, succeeded, failures, last_error)
), old AS MATERIALIZED (
  SELECT s.id, s.enabled, s.circuit_state, s.circuit_since, s.consecutive_failures, s.failing_since, s.circuit_probes,
         r.succeeded, r.failures, r.last_error
  FROM subscriptions s JOIN r ON r.subscription_id = s.id
  WHERE s.deleted_at IS NULL
  ORDER BY s.id
  FOR UPDATE OF s
), counted AS (
  SELECT o.*,
         CASE WHEN o.succeeded THEN o.failures ELSE o.consecutive_failures + o.failures END AS n_failures,
         CASE WHEN o.failures = 0 THEN NULL
              WHEN o.succeeded OR o.failing_since IS NULL THEN now() ELSE o.failing_since END AS n_failing_since
  FROM old o
), decided AS (
  SELECT c.*,
         c.n_failures >= $5 AND (c.succeeded OR c.circuit_state = 'closed') AS opened,
         c.succeeded AND c.circuit_state <> 'closed' AS closed,
         NOT c.succeeded AND c.failures > 0 AND c.circuit_state = 'half_open' AS probe_failed,
         c.enabled AND c.n_failures > 0 AND c.n_failing_since <= now() - $8 * interval '1 millisecond' AS disable
  FROM counted c
), planned AS (
  SELECT d.*,
         CASE WHEN d.opened OR d.probe_failed THEN 'open' WHEN d.succeeded THEN 'closed' ELSE d.circuit_state END
           AS n_state,
         CASE WHEN d.opened THEN 0 WHEN d.probe_failed THEN d.circuit_probes + 1 WHEN d.succeeded THEN 0
              ELSE d.circuit_probes END AS n_probes,
         CASE WHEN d.disable THEN format('failing since %s: %s consecutive failures, the last: %s',
                                         to_char(d.n_failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                                         d.n_failures, coalesce(d.last_error, 'unknown'))
         END AS disabled_reason
  FROM decided d
), updated AS (
  UPDATE subscriptions s SET
    consecutive_failures = n.n_failures,
    failing_since = n.n_failing_since,
    circuit_state = n.n_state,
    -- Since when it is open (half-open included), or since when it is closed again.
    circuit_since = CASE WHEN n.opened OR (n.n_state = 'closed' AND n.circuit_state <> 'closed') THEN now()
                    ELSE s.circuit_since END,
    circuit_last_error = coalesce(n.last_error, s.circuit_last_error),
    circuit_probes = n.n_probes,
    circuit_probe_at = CASE WHEN n.n_state = 'closed' THEN NULL
                            WHEN n.opened OR n.probe_failed
                              THEN now() + least($7, $6 * power(2, least(n.n_probes, 30))) * interval '1 millisecond'
                            ELSE s.circuit_probe_at END,
    enabled = CASE WHEN n.disable THEN false ELSE s.enabled END,
    disabled_reason = CASE WHEN n.disable THEN n.disabled_reason ELSE s.disabled_reason END,
    updated_at = CASE WHEN n.disable THEN now() ELSE s.updated_at END
  FROM planned n WHERE s.id = n.id
  RETURNING s.id, s.circuit_probe_at
), audited AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT 'worker', a.action, n.id, a.details
  FROM planned n CROSS JOIN LATERAL (VALUES
    (n.closed AND n.n_state = 'closed', 'subscription.circuit_closed', jsonb_build_object('from', n.circuit_state)),
    (n.opened, 'subscription.circuit_opened',
     jsonb_build_object('consecutiveFailures', n.n_failures, 'lastError', n.last_error)),
    (n.disable, 'subscription.disabled', jsonb_build_object('reason', n.disabled_reason))
  ) AS a(happened, action, details)
  WHERE a.happened
), disabled_now AS (
  SELECT id, disabled_reason FROM planned WHERE disable
), ${operationalEvents(`
  SELECT 'subscription.circuit_opened'::text AS type, n.id AS subscription_id,
         jsonb_build_object('subscriptionId', n.id, 'openedAt', ${isoTime('now()')},
                            'consecutiveFailures', n.n_failures, 'lastError', n.last_error) AS data
  FROM planned n WHERE n.opened
  UNION ALL
  SELECT 'subscription.circuit_closed', n.id,
         jsonb_build_object('subscriptionId', n.id, 'closedAt', ${isoTime('now()')},
                            'openedAt', CASE WHEN n.circuit_since IS NOT NULL THEN ${isoTime('n.circuit_since')} END)
  FROM planned n WHERE n.closed AND n.n_state = 'closed'
  UNION ALL
  ${subscriptionDisabledEvents('disabled_now')}`)}
SELECT n.id AS subscription_id, n.closed AND n.n_state = 'closed' AS closed, n.opened, n.probe_failed, n.disable,
       n.disabled_reason, n.last_error, ${msFromNow('u.circuit_probe_at')} AS probe_in_ms
FROM planned n JOIN updated u ON u.id = n.id`,
});

/**
 * Pending rows have a cap per subscription (issue #36): a failing endpoint (failures since its last success, an
 * open circuit, or a pause it asked for) holding more than `$1` pending deliveries is disabled, as a 410 disables
 * one, with its audit event and subscription.disabled. Its rows stay and go out once it is enabled again; while it
 * is disabled nothing new is written for it, so its rows stop growing. A healthy subscriber working off a backlog
 * (after an outage, a replay) is left alone. Counted per subscription up to `$1 + 1` on the pending index, so a
 * check costs at most that many index entries per failing subscriber.
 */
export const DISABLE_OVER_BACKLOG = statement({
  name: 'disable-over-backlog',
  runBy: 'SubscriberHealthRepository.disableOverBacklog',
  params: ['the most pending deliveries a failing subscription may hold (DELIVERY_PENDING_MAX)'],
  text: `
WITH over AS MATERIALIZED (
  SELECT s.id FROM subscriptions s
  WHERE s.enabled AND s.deleted_at IS NULL AND s.kind = 'plants'
    AND (s.consecutive_failures > 0 OR s.circuit_state <> 'closed' OR s.paused_until > now())
    AND (SELECT count(*) FROM (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id AND d.status = 'pending'
                               LIMIT $1 + 1) x) > $1
  ORDER BY s.id
), disabled AS (
  UPDATE subscriptions s SET enabled = false, updated_at = now(),
         disabled_reason = format('more than %s deliveries waiting while its endpoint fails (DELIVERY_PENDING_MAX); '
           || 'fix the endpoint, then enable the subscription: the waiting deliveries go out then', $1::int)
  FROM over o WHERE s.id = o.id AND s.enabled
  RETURNING s.id, s.disabled_reason
), ${auditWorkerDisabled('disabled')}, ${operationalEvents(subscriptionDisabledEvents('disabled'))}
SELECT (SELECT count(*) FROM disabled)::int AS disabled`,
});
