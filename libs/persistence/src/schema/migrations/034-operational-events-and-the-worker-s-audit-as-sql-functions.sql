-- operational events and the worker's audit as SQL functions
-- Rules several statements share, written once here rather than pasted into every statement as text (issue #38):
-- how an operational event becomes a pending delivery for each operational subscriber that takes it, the data of
-- subscription.disabled and dead_letter.created, the worker's audit event for a subscription it disabled, and the
-- two time formats the statements answer with. Each statement still writes the rows itself, in a data-modifying
-- CTE (`INSERT INTO deliveries (…) SELECT * FROM operational_deliveries(…)`): PostgreSQL runs one whether or not the
-- rest of the statement reads it, which a function called from a SELECT would not be.

      -- An instant as the events carry it: RFC 3339 in UTC with milliseconds, whatever the session's time zone.
      CREATE FUNCTION event_time_text(t timestamptz) RETURNS text
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      $fn$;

      -- Milliseconds from now until `t` (negative when past): how long a pause or a probe has to go.
      CREATE FUNCTION ms_from_now(t timestamptz) RETURNS float8
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT (extract(epoch FROM t - now()) * 1000)::float8
      $fn$;

      -- One of Plant Store's own events (OperationalEventType): `subscription_id` is the subscription it is about
      -- (which is not told about itself), or null.
      CREATE TYPE operational_event AS (type text, subscription_id uuid, data jsonb);

      -- A pending delivery for each enabled operational subscriber whose `event_types` take the event: the body is
      -- `{type, timestamp, data}` as Standard Webhooks and Svix send it, the delivery's event_id the message id
      -- (`webhook-id`), one per event, the same for every subscriber. A plant subscription never gets one.
      CREATE FUNCTION operational_deliveries(events operational_event[])
      RETURNS TABLE (subscription_id uuid, event_id text, event_type text, body text, event_time timestamptz)
      LANGUAGE sql VOLATILE AS $fn$
        WITH ev AS MATERIALIZED (
          SELECT gen_random_uuid()::text AS event_id, x.type, x.subscription_id, x.data FROM unnest(events) x
        )
        SELECT s.id, ev.event_id, ev.type,
               jsonb_build_object('type', ev.type, 'timestamp', event_time_text(now()), 'data', ev.data)::text, now()
        FROM ev
        JOIN subscriptions s ON s.kind = 'operational' AND s.enabled AND s.deleted_at IS NULL
             AND (s.event_types IS NULL OR ev.type = ANY (s.event_types))
             AND s.id IS DISTINCT FROM ev.subscription_id
      $fn$;

      -- subscription.disabled, about a subscription the worker (or an operator's bound) just disabled.
      CREATE FUNCTION subscription_disabled_event(id uuid, reason text) RETURNS operational_event
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT ROW('subscription.disabled', id,
                   jsonb_build_object('subscriptionId', id, 'reason', reason, 'disabledAt', event_time_text(now()))
               )::operational_event
      $fn$;

      -- dead_letter.created, from the columns of a row of dead_letters just archived (not its value, which may be
      -- large). The key is bytes (poison is whatever it was): shown in escape form (a plant id reads as itself),
      -- which no key can make fail, or the archive would stop on it.
      CREATE FUNCTION dead_letter_created_event(id bigint, reason text, dead_lettered_at timestamptz,
                                                origin_topic text, origin_partition int, origin_offset bigint,
                                                key bytea, truncated boolean) RETURNS operational_event
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT ROW('dead_letter.created', NULL::uuid,
                   jsonb_build_object('deadLetterId', id::text, 'reason', reason,
                     'deadLetteredAt', event_time_text(dead_lettered_at),
                     'origin', jsonb_build_object('topic', origin_topic, 'partition', origin_partition,
                       'offset', origin_offset::text),
                     'key', encode(key, 'escape'), 'truncated', truncated)
               )::operational_event
      $fn$;

      -- The worker's audit event for a subscription it just disabled: a row for audit_events
      -- (actor, action, subscription_id, details).
      CREATE FUNCTION worker_disabled_audit(id uuid, reason text)
      RETURNS TABLE (actor text, action text, subscription_id uuid, details jsonb)
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT 'worker', 'subscription.disabled', id, jsonb_build_object('reason', reason)
      $fn$;
