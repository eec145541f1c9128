-- the columns a delivery is sent with, as a view
-- What a subscription's deliveries are sent with (SendSettings in libs/delivery, sealed), written once here rather
-- than listed in every statement that hands a delivery or a subscription out (issue #38): the claim, a test send
-- and each worker's copy of its subscribers read this view, so a column added here reaches every way a delivery
-- leaves. A rotated-out secret still signs until its overlap ends. PostgreSQL flattens a view into the statement
-- that reads it: the plans are the ones the listed columns had.

      CREATE VIEW subscription_send_settings AS
      SELECT s.id AS subscription_id, s.url, s.token, s.secret, s.max_deliveries_per_second, s.max_concurrency,
             s.headers, s.secret_headers, s.destination, s.destination_secrets,
             CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret
      FROM subscriptions s;

      -- What a worker holds of each enabled subscription (LoadedSubscriber in libs/persistence), credentials
      -- sealed: the send settings, the previous secret's end (the worker stops signing with it then), and who
      -- receives what (kind, filter). Migration 23's trigger watches the same columns.
      CREATE VIEW worker_subscribers AS
      SELECT s.id, s.created_at,
             to_jsonb(ss) - 'subscription_id'
               || jsonb_build_object('id', s.id, 'previous_until', s.previous_secret_expires_at, 'filter', s.filter,
                                     'kind', s.kind) AS subscriber
      FROM subscriptions s JOIN subscription_send_settings ss ON ss.subscription_id = s.id
      WHERE s.enabled AND s.deleted_at IS NULL;
