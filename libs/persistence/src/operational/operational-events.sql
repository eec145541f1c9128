-- Operational webhooks emitted from TypeScript; statements that make a change emit theirs themselves
-- (operational_deliveries, migration 34).

-- @name emit-operational-event
-- One operational event from TypeScript (OPERATIONAL_EVENTS.emit): a pending delivery per operational subscriber.
-- Sent by OperationalEventRepository.emit.
-- :type its type (OperationalEventType)
-- :subscription the subscription it is about, or null
-- :data its data (jsonb)
WITH op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY[ROW(:type::text, :subscription::uuid, :data::jsonb)::operational_event])
  RETURNING 1
)
SELECT (SELECT count(*) FROM op_deliveries)::int AS deliveries;
