-- Subscriber health: each replica's heartbeat, a subscriber's pause (Retry-After), its circuit breaker and probes, and
-- disabling one that fails for too long or holds too many pending deliveries while it fails; each change that an
-- operator should hear of emits its operational event (operational_deliveries, migration 34).

-- @name subscriber-heartbeat
-- A replica says it is alive, and reads what it needs to gate its sends: the live replicas (to split each limit
-- between them) and every subscriber with a limit, a pause, failures or a circuit not closed. Replicas not seen for
-- an hour are forgotten. Sent by SubscriberHealthRepository.heartbeat.
-- :replica this replica's id
-- :liveWithinMs how recently a live replica was seen, ms
WITH me AS (
  INSERT INTO worker_replicas (id, seen_at) VALUES (:replica, now())
  ON CONFLICT (id) DO UPDATE SET seen_at = now()
  RETURNING 1
), forgotten AS (
  DELETE FROM worker_replicas WHERE seen_at < now() - interval '1 hour' RETURNING 1
)
SELECT (SELECT array_agg(id::text ORDER BY id::text) FROM (
          SELECT id FROM worker_replicas WHERE seen_at > now() - :liveWithinMs * interval '1 millisecond'
          UNION SELECT :replica::uuid
        ) live) AS replicas,
       g.*
FROM (SELECT 1) one LEFT JOIN (
  SELECT s.id AS subscription_id, s.max_deliveries_per_second, s.max_concurrency,
         CASE WHEN s.paused_until > now() THEN ms_from_now(s.paused_until) END AS paused_for_ms,
         s.circuit_state, ms_from_now(s.circuit_probe_at) AS probe_in_ms, s.consecutive_failures
  FROM subscriptions s
  WHERE s.enabled AND (s.max_deliveries_per_second IS NOT NULL OR s.max_concurrency IS NOT NULL
                       OR s.paused_until > now() OR s.circuit_state <> 'closed' OR s.consecutive_failures > 0)
) g ON true;

-- @name subscriber-heartbeat-leave
-- Sent by SubscriberHealthRepository.leave.
-- :replica this replica's id
DELETE FROM worker_replicas WHERE id = :replica;

-- @name subscriber-pause
-- The subscriber asked to wait (429 or 503 with Retry-After): paused until then, never shortened by a shorter
-- answer that arrives meanwhile. The audit trail records a pause that starts, not each answer that extends it. Sent
-- by SubscriberHealthRepository.pause.
-- :id its id
-- :forMs for how long, ms
-- :reason why (the answer that asked)
WITH old AS MATERIALIZED (
  SELECT id, coalesce(paused_until > now(), false) AS was_paused FROM subscriptions
  WHERE id = :id AND enabled FOR UPDATE
), paused AS (
  UPDATE subscriptions s
  SET paused_until = greatest(coalesce(s.paused_until, now()), now() + :forMs * interval '1 millisecond')
  FROM old WHERE s.id = old.id
  RETURNING s.id, s.paused_until, old.was_paused
), audited AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT 'worker', 'subscription.paused', id, jsonb_build_object('until', paused_until, 'reason', :reason::text)
  FROM paused WHERE NOT was_paused
)
SELECT ms_from_now(paused_until) AS for_ms FROM paused;

-- @name subscriber-start-probe
-- Takes an open circuit's probe once its wait is over (or a half-open one whose probe's holder went quiet): the
-- replica whose statement changes the row sends the probe; the circuit is half-open until it is answered. Sent by
-- SubscriberHealthRepository.startProbe.
-- :id its id
-- :holdMs how long the probe is held, ms
UPDATE subscriptions SET circuit_state = 'half_open',
       circuit_probe_at = now() + :holdMs * interval '1 millisecond'
WHERE id = :id AND enabled AND circuit_state IN ('open', 'half_open') AND circuit_probe_at <= now()
RETURNING id;

-- @name subscriber-record-health
-- The breaker's one statement: a batch's outcomes per subscriber (failures after its last success, whether one
-- succeeded) move the consecutive-failure count and make every transition they call for, each written with an audit
-- event: a success closes the circuit; `failuresToOpen` consecutive failures open a closed one (the first probe
-- after probeMin); a failure while half-open is a failed probe (it opens again, waiting twice as long, at most
-- probeMax); a subscriber failing for `disableAfter` is disabled, with its reason, as a 410 disables one. Sent by
-- SubscriberHealthRepository.recordOutcomes.
-- :subscriptions the subscriptions
-- :succeeded whether one of its deliveries succeeded in the batch
-- :failures its failures after the last success (all, if none)
-- :lastError the last failure (storable text), or null
-- :failuresToOpen consecutive failures that open the circuit
-- :probeMinMs the first probe wait, ms
-- :probeMaxMs the longest probe wait, ms
-- :disableAfterMs how long a subscriber may fail before it is disabled, ms
WITH r AS (
  SELECT * FROM unnest(:subscriptions::uuid[], :succeeded::boolean[], :failures::int[], :lastError::text[])
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
         c.n_failures >= :failuresToOpen AND (c.succeeded OR c.circuit_state = 'closed') AS opened,
         c.succeeded AND c.circuit_state <> 'closed' AS closed,
         NOT c.succeeded AND c.failures > 0 AND c.circuit_state = 'half_open' AS probe_failed,
         c.enabled AND c.n_failures > 0
            AND c.n_failing_since <= now() - :disableAfterMs * interval '1 millisecond' AS disable
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
                              THEN now() + least(:probeMaxMs, :probeMinMs * power(2, least(n.n_probes, 30)))
                                           * interval '1 millisecond'
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
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW('subscription.circuit_opened', n.id,
               jsonb_build_object('subscriptionId', n.id, 'openedAt', event_time_text(now()),
                                  'consecutiveFailures', n.n_failures, 'lastError', n.last_error))::operational_event
    FROM planned n WHERE n.opened
    UNION ALL
    SELECT ROW('subscription.circuit_closed', n.id,
               jsonb_build_object('subscriptionId', n.id, 'closedAt', event_time_text(now()),
                                  'openedAt', CASE WHEN n.circuit_since IS NOT NULL
                                                   THEN event_time_text(n.circuit_since) END))::operational_event
    FROM planned n WHERE n.closed AND n.n_state = 'closed'
    UNION ALL
    SELECT subscription_disabled_event(x.id, x.disabled_reason) FROM disabled_now x))
  RETURNING 1
)
SELECT n.id AS subscription_id, n.closed AND n.n_state = 'closed' AS closed, n.opened, n.probe_failed, n.disable,
       n.disabled_reason, n.last_error, ms_from_now(u.circuit_probe_at) AS probe_in_ms
FROM planned n JOIN updated u ON u.id = n.id;

-- @name disable-over-backlog
-- Pending rows have a cap per subscription (issue #36): a failing endpoint (failures since its last success, an
-- open circuit, or a pause it asked for) holding more than `:pendingMax` pending deliveries is disabled, as a 410
-- disables one, with its audit event and subscription.disabled. Its rows stay and go out once it is enabled again;
-- while it is disabled nothing new is written for it, so its rows stop growing. A healthy subscriber working off a
-- backlog (after an outage, a replay) is left alone. Counted per subscription up to `:pendingMax + 1` on the
-- pending index, so a check costs at most that many index entries per failing subscriber. Sent by
-- SubscriberHealthRepository.disableOverBacklog.
-- :pendingMax the most pending deliveries a failing subscription may hold (DELIVERY_PENDING_MAX)
WITH over AS MATERIALIZED (
  SELECT s.id FROM subscriptions s
  WHERE s.enabled AND s.deleted_at IS NULL AND s.kind = 'plants'
    AND (s.consecutive_failures > 0 OR s.circuit_state <> 'closed' OR s.paused_until > now())
    AND (SELECT count(*) FROM (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id AND d.status = 'pending'
                               LIMIT :pendingMax + 1) x) > :pendingMax
  ORDER BY s.id
), disabled AS (
  UPDATE subscriptions s SET enabled = false, updated_at = now(),
         disabled_reason = format('more than %s deliveries waiting while its endpoint fails (DELIVERY_PENDING_MAX); '
           || 'fix the endpoint, then enable the subscription: the waiting deliveries go out then', :pendingMax::int)
  FROM over o WHERE s.id = o.id AND s.enabled
  RETURNING s.id, s.disabled_reason
), disabled_audit AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT a.* FROM disabled x, worker_disabled_audit(x.id, x.disabled_reason) a
  RETURNING 1
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT subscription_disabled_event(x.id, x.disabled_reason) FROM disabled x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM disabled)::int AS disabled;
