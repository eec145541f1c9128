-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every audit statement the repositories send, exactly as sent, with what each parameter means.

-- record-audit-event
-- Sent by AuditRepository.record.
-- $1: who acted (an admin key, or worker)
-- $2: what was done (e.g. subscription.disabled)
-- $3: the subscription concerned, or null
-- $4: the delivery concerned, or null
-- $5: details (jsonb, storable)
INSERT INTO audit_events (actor, action, subscription_id, delivery_id, details) VALUES ($1, $2, $3, $4, $5);

-- record-audit-events
-- Sent by AuditRepository.recordMany.
-- $1: the events' actors
-- $2: their actions
-- $3: their subscriptions
-- $4: their deliveries
-- $5: their details (jsonb)
INSERT INTO audit_events (actor, action, subscription_id, delivery_id, details)
       SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::uuid[], $5::jsonb[]);

-- list-audit-events
-- Sent by AuditRepository.list.
-- $1: the filter's subscription, or null
-- $2: at or after, or null
-- $3: before, or null
-- $4: the page: ids below this one, or null for the newest
-- $5: how many rows at most
SELECT *, id AS seq FROM audit_events
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::timestamptz IS NULL OR at >= $2)
         AND ($3::timestamptz IS NULL OR at < $3) AND ($4::bigint IS NULL OR id < $4)
       ORDER BY id DESC LIMIT $5;

-- count-recent-actions
-- Sent by AuditRepository.countRecent.
-- $1: the subscription
-- $2: the action
-- $3: the actors' name prefix (LIKE, escaped)
-- $4: the window, seconds
SELECT count(*)::int AS count, min(at) AS oldest FROM audit_events
       WHERE subscription_id = $1 AND action = $2 AND actor LIKE $3 || '%'
         AND at > now() - $4 * interval '1 second';
