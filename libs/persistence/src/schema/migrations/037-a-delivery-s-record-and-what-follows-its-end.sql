-- a delivery's record and what follows its end, as SQL functions
-- Rules the fan-out, the ingest statement and the records of attempts share, written once here rather than pasted
-- into each as text (issue #38): who receives New Plant webhooks, a delivery's key in the log and the part of the
-- log that can hold it, an attempt as the log records it, and what follows when deliveries end for good (a 410
-- disables its subscription, with the worker's audit; an exhausted delivery notifies the operational
-- subscribers, coalesced per subscription). The expressions are inlined by PostgreSQL into their callers.

      -- Who receives New Plant webhooks: enabled subscriptions of that kind (not operational ones).
      CREATE VIEW plant_subscribers AS
      SELECT s.id, s.filter FROM subscriptions s WHERE s.enabled AND s.kind = 'plants';

      -- The key of a subscriber's delivery of an event, the same whichever fan-out sends it: the id of its row in
      -- delivery_log (the append-only log of deliveries that succeeded at once), so that a record finds a delivery
      -- the log holds already through the id index it has anyway.
      CREATE FUNCTION delivery_key(event_id text, subscription_id uuid) RETURNS uuid
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT md5(event_id || '/' || subscription_id::text)::uuid
      $fn$;

      -- Where delivery_log holds a delivery of an event created at `t`: written after it, so only the partitions
      -- from then on are searched (a minute's margin for a clock set back).
      CREATE FUNCTION log_from(t timestamptz) RETURNS timestamptz
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT coalesce(t - interval '1 minute', '-infinity')
      $fn$;

      -- One entry of a delivery's attempt log (AttemptRecord in libs/delivery).
      CREATE FUNCTION attempt_entry(attempted_at timestamptz, status int, latency_ms int, error text,
                                    response_body text, signature text) RETURNS jsonb
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT jsonb_build_object('attemptedAt', attempted_at, 'status', status, 'latencyMs', latency_ms,
                                  'error', error, 'responseBody', response_body, 'signature', signature)
      $fn$;

      -- A subscriber that said 410 Gone, and why its subscription is disabled.
      CREATE TYPE gone_subscription AS (subscription_id uuid, reason text);

      -- A New Plant delivery that failed for good by an attempt (its attempts ran out, or the subscriber said 410).
      CREATE TYPE exhausted_delivery AS (delivery_id uuid, subscription_id uuid, event_id text, plant_id bigint,
                                         attempts int, attempted_at timestamptz, http_status int, error text);

      -- What follows when deliveries end for good, for the statements that record attempts: a subscription whose
      -- subscriber said 410 Gone is disabled, and the audit trail shows it beside the admins' changes; each one
      -- disabled now is reported (subscription.disabled); an exhausted delivery is reported (delivery.exhausted)
      -- once per subscription and window, with how many were held back since the previous notice (issue #36: a
      -- portal link replaying a failing endpoint's deliveries would otherwise page every operator once per
      -- delivery). Notices are taken in subscription order, so two callers lock them in the same order. Answers how
      -- many operational deliveries it wrote. PL/pgSQL: its plan is kept per connection, and a call with nothing
      -- that ended (the common one) returns before it.
      CREATE FUNCTION settle_final_outcomes(gone gone_subscription[], exhausted exhausted_delivery[]) RETURNS int
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        -- How long one delivery.exhausted about a subscription stands for the others (docs/delivery.md).
        notice_window constant interval := interval '60 seconds';
        written int;
      BEGIN
        IF cardinality(gone) = 0 AND cardinality(exhausted) = 0 THEN
          RETURN 0;
        END IF;
        WITH disabled AS (
          UPDATE subscriptions s SET enabled = false, disabled_reason = g.reason, updated_at = now()
          FROM (SELECT DISTINCT ON (x.subscription_id) x.subscription_id, x.reason FROM unnest(gone) x
                WHERE x.reason IS NOT NULL) g
          WHERE s.id = g.subscription_id AND s.enabled
          RETURNING s.id, s.disabled_reason
        ), disabled_audit AS (
          INSERT INTO audit_events (actor, action, subscription_id, details)
          SELECT a.* FROM disabled x, worker_disabled_audit(x.id, x.disabled_reason) a
          RETURNING 1
        ), ended AS MATERIALIZED (
          SELECT * FROM unnest(exhausted)
        ), notices AS (
          INSERT INTO operational_notices AS o (subscription_id, type, window_ends, held, reported)
          SELECT x.subscription_id, 'delivery.exhausted', now() + notice_window, count(*) - 1, 0
          FROM ended x GROUP BY x.subscription_id ORDER BY x.subscription_id
          ON CONFLICT (subscription_id, type) DO UPDATE SET
            reported = CASE WHEN o.window_ends <= now() THEN o.held ELSE o.reported END,
            held = CASE WHEN o.window_ends <= now() THEN excluded.held ELSE o.held + excluded.held + 1 END,
            window_ends = CASE WHEN o.window_ends <= now() THEN excluded.window_ends ELSE o.window_ends END
          RETURNING o.subscription_id, o.reported, o.window_ends = now() + notice_window AS notify
        ), op_deliveries AS (
          INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
          SELECT * FROM operational_deliveries(ARRAY(
            SELECT subscription_disabled_event(x.id, x.disabled_reason) FROM disabled x
            UNION ALL
            (SELECT DISTINCT ON (x.subscription_id)
                    ROW('delivery.exhausted', NULL::uuid,
                        jsonb_build_object('deliveryId', x.delivery_id, 'subscriptionId', x.subscription_id,
                          'eventId', x.event_id, 'plantId', x.plant_id, 'attempts', x.attempts,
                          'lastAttempt', jsonb_build_object('attemptedAt', event_time_text(x.attempted_at),
                            'status', x.http_status, 'error', x.error),
                          'heldBack', n.reported))::operational_event
             FROM ended x JOIN notices n ON n.subscription_id = x.subscription_id AND n.notify
             ORDER BY x.subscription_id, x.delivery_id)))
          RETURNING 1
        )
        SELECT count(*)::int INTO written FROM op_deliveries;
        RETURN written;
      END
      $fn$;
