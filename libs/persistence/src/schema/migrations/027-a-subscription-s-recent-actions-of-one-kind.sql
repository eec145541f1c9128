-- a subscription's recent actions of one kind, indexed: the replay budget reads only those
-- The portal replay budget counts a subscription's replays of the last day. By (subscription_id, id) it read
-- every audit event of the subscription (each retry, change and test adds one) for each call it checked.

CREATE INDEX audit_events_recent_actions ON audit_events (subscription_id, action, at);
