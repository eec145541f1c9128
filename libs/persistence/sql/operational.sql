-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every operational statement the repositories send, exactly as sent, with what each parameter means.

-- emit-operational-event
-- Sent by OperationalEventRepository.emit.
-- $1: its type (OperationalEventType)
-- $2: the subscription it is about, or null
-- $3: its data (jsonb)
WITH op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (SELECT $1::text AS type, $2::uuid AS subscription_id, $3::jsonb AS data) x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM op_deliveries)::int AS deliveries;
