-- The audit log: who did what to which subscription or delivery, as the admin API lists it.

-- @name record-audit-event
-- Sent by AuditRepository.record.
-- :actor who acted (an admin key, or worker)
-- :action what was done (e.g. subscription.disabled)
-- :subscription the subscription concerned, or null
-- :delivery the delivery concerned, or null
-- :details details (jsonb, storable)
INSERT INTO audit_events (actor, action, subscription_id, delivery_id, details)
  VALUES (:actor, :action, :subscription, :delivery, :details);

-- @name record-audit-events
-- Sent by AuditRepository.recordMany.
-- :actors the events' actors
-- :actions their actions
-- :subscriptions their subscriptions
-- :deliveries their deliveries
-- :details their details (jsonb)
INSERT INTO audit_events (actor, action, subscription_id, delivery_id, details)
  SELECT * FROM unnest(:actors::text[], :actions::text[], :subscriptions::uuid[], :deliveries::uuid[],
                       :details::jsonb[]);

-- @name list-audit-events
-- Sent by AuditRepository.list.
-- :subscription the filter's subscription, or null
-- :since at or after, or null
-- :until before, or null
-- :before the page: ids below this one, or null for the newest
-- :limit how many rows at most
SELECT *, id AS seq FROM audit_events
  WHERE (:subscription::uuid IS NULL OR subscription_id = :subscription)
    AND (:since::timestamptz IS NULL OR at >= :since)
    AND (:until::timestamptz IS NULL OR at < :until) AND (:before::bigint IS NULL OR id < :before)
  ORDER BY id DESC LIMIT :limit;

-- @name count-recent-actions
-- How many times, within a window up to now, actors whose name starts with a prefix (`portal-link:`) took an action
-- on a subscription, and when the oldest of those was: a daily budget's count and when it frees a call. Sent by
-- AuditRepository.countRecent.
-- :subscription the subscription
-- :action the action
-- :actorPrefix the actors' name prefix (LIKE, escaped)
-- :windowSeconds the window, seconds
SELECT count(*)::int AS count, min(at) AS oldest FROM audit_events
  WHERE subscription_id = :subscription AND action = :action AND actor LIKE :actorPrefix || '%'
    AND at > now() - :windowSeconds * interval '1 second';
