-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every operational statement the repositories send, exactly as sent, with what each parameter means.

-- emit-operational-event
-- Sent by OperationalEventRepository.emit.
-- $1: its type (OperationalEventType)
-- $2: the subscription it is about, or null
-- $3: its data (jsonb)
WITH op_events AS MATERIALIZED (
  SELECT gen_random_uuid()::text AS event_id, x.type, x.subscription_id, x.data FROM (SELECT $1::text AS type, $2::uuid AS subscription_id, $3::jsonb AS data) x
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, plant_id, event_type, body, event_time)
  SELECT s.id, ev.event_id, NULL, ev.type,
         jsonb_build_object('type', ev.type, 'timestamp', to_char((now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', ev.data)::text, now()
  FROM op_events ev
  JOIN subscriptions s ON s.kind = 'operational' AND s.enabled AND s.deleted_at IS NULL
       AND (s.event_types IS NULL OR ev.type = ANY (s.event_types))
       AND s.id IS DISTINCT FROM ev.subscription_id
  RETURNING 1
)
SELECT (SELECT count(*) FROM op_deliveries)::int AS deliveries;
