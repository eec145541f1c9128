-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every subscriber-health statement the repositories send, exactly as sent, with what each parameter means.

-- subscriber-heartbeat
-- Sent by SubscriberHealthRepository.heartbeat.
-- $1: this replica's id
-- $2: how recently a live replica was seen, ms
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
         CASE WHEN s.paused_until > now() THEN (extract(epoch FROM s.paused_until - now()) * 1000)::float8 END AS paused_for_ms,
         s.circuit_state, (extract(epoch FROM s.circuit_probe_at - now()) * 1000)::float8 AS probe_in_ms, s.consecutive_failures
  FROM subscriptions s
  WHERE s.enabled AND (s.max_deliveries_per_second IS NOT NULL OR s.max_concurrency IS NOT NULL
                       OR s.paused_until > now() OR s.circuit_state <> 'closed' OR s.consecutive_failures > 0)
) g ON true;

-- subscriber-heartbeat-leave
-- Sent by SubscriberHealthRepository.leave.
-- $1: this replica's id
DELETE FROM worker_replicas WHERE id = $1;

-- subscriber-pause
-- Sent by SubscriberHealthRepository.pause.
-- $1: its id
-- $2: for how long, ms
-- $3: why (the answer that asked)
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
SELECT (extract(epoch FROM paused_until - now()) * 1000)::float8 AS for_ms FROM paused;

-- subscriber-start-probe
-- Sent by SubscriberHealthRepository.startProbe.
-- $1: its id
-- $2: how long the probe is held, ms
UPDATE subscriptions SET circuit_state = 'half_open',
       circuit_probe_at = now() + $2 * interval '1 millisecond'
WHERE id = $1 AND enabled AND circuit_state IN ('open', 'half_open') AND circuit_probe_at <= now()
RETURNING id;

-- subscriber-record-health
-- Sent by SubscriberHealthRepository.recordOutcomes.
-- $1: the subscriptions
-- $2: whether one of its deliveries succeeded in the batch
-- $3: its failures after the last success (all, if none)
-- $4: the last failure (storable text), or null
-- $5: consecutive failures that open the circuit
-- $6: the first probe wait, ms
-- $7: the longest probe wait, ms
-- $8: how long a subscriber may fail before it is disabled, ms
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
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (
  SELECT 'subscription.circuit_opened'::text AS type, n.id AS subscription_id,
         jsonb_build_object('subscriptionId', n.id, 'openedAt', event_time_text(now()),
                            'consecutiveFailures', n.n_failures, 'lastError', n.last_error) AS data
  FROM planned n WHERE n.opened
  UNION ALL
  SELECT 'subscription.circuit_closed', n.id,
         jsonb_build_object('subscriptionId', n.id, 'closedAt', event_time_text(now()),
                            'openedAt', CASE WHEN n.circuit_since IS NOT NULL THEN event_time_text(n.circuit_since) END)
  FROM planned n WHERE n.closed AND n.n_state = 'closed'
  UNION ALL
  
  SELECT e.* FROM disabled_now x, subscription_disabled_event(x.id, x.disabled_reason) e) x))
  RETURNING 1
)
SELECT n.id AS subscription_id, n.closed AND n.n_state = 'closed' AS closed, n.opened, n.probe_failed, n.disable,
       n.disabled_reason, n.last_error, (extract(epoch FROM u.circuit_probe_at - now()) * 1000)::float8 AS probe_in_ms
FROM planned n JOIN updated u ON u.id = n.id;

-- disable-over-backlog
-- Sent by SubscriberHealthRepository.disableOverBacklog.
-- $1: the most pending deliveries a failing subscription may hold (DELIVERY_PENDING_MAX)
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
), disabled_audit AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT a.* FROM disabled x, worker_disabled_audit(x.id, x.disabled_reason) a
  RETURNING 1
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (
  SELECT e.* FROM disabled x, subscription_disabled_event(x.id, x.disabled_reason) e) x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM disabled)::int AS disabled;
