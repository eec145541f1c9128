-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every subscriptions statement the repositories send, exactly as sent, with what each parameter means.

-- create-subscription
-- Sent by SubscriptionRepository.create.
-- $1: its id (chosen by the caller: the sealed values are bound to it)
-- $2: the URL deliveries go to
-- $3: its token, sealed, or null
-- $4: its signing secret (or private key), sealed
-- $5: symmetric or asymmetric
-- $6: the public key beside an asymmetric key, or null
-- $7: a description, or null
-- $8: its filter (jsonb)
-- $9: plants or operational
-- $10: operational: the event types it receives, or null for all
-- $11: maxDeliveriesPerSecond, or null
-- $12: maxConcurrency, or null
-- $13: its custom headers (jsonb, name -> value)
-- $14: its secret headers (jsonb, name -> sealed value)
-- $15: a broker destination's settings (jsonb)
-- $16: a broker destination's secrets, sealed JSON, or null
INSERT INTO subscriptions (id, url, token, secret, signature, public_key, description, filter, kind, event_types,
                                max_deliveries_per_second, max_concurrency, headers, secret_headers, destination,
                                destination_secrets)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING *;

-- list-subscriptions
-- Sent by SubscriptionRepository.list.
SELECT * FROM subscriptions WHERE deleted_at IS NULL ORDER BY created_at, id;

-- find-subscription
-- Sent by SubscriptionRepository.findById.
-- $1: its id
SELECT * FROM subscriptions WHERE id = $1 AND deleted_at IS NULL;

-- update-subscription
-- Sent by SubscriptionRepository.update.
-- $1: its id
-- $2: the new URL, or null to keep it
-- $3: whether the token changes
-- $4: the new token, sealed, or null to remove it
-- $5: enabled, or null to keep it
-- $6: the new description, or null to keep it
-- $7: the reason kept when disabled (by an admin, or through a portal link)
-- $8: the new filter (jsonb), or null to keep it
-- $9: whether the event types change
-- $10: the new event types, or null for all
-- $11: whether maxDeliveriesPerSecond changes
-- $12: the new maxDeliveriesPerSecond, or null to remove it
-- $13: whether maxConcurrency changes
-- $14: the new maxConcurrency, or null to remove it
-- $15: all its custom headers now (jsonb), or null to keep them
-- $16: all its secret headers now (jsonb, sealed values), or null to keep them
-- $17: whether a portal link makes the change (it cannot enable what the operator disabled)
-- $18: the URL the headers and token written were decided for (else no change), or null when neither is written
-- $19: whether the destination's settings and secrets change (with the URL: they go with it)
-- $20: the destination's settings now (jsonb)
-- $21: the destination's secrets now, sealed JSON, or null
UPDATE subscriptions SET
         url = COALESCE($2, url),
         max_deliveries_per_second = CASE WHEN $11::boolean THEN $12::float8 ELSE max_deliveries_per_second END,
         max_concurrency = CASE WHEN $13::boolean THEN $14::int ELSE max_concurrency END,
         circuit_state = CASE WHEN $5 AND NOT enabled THEN 'closed' ELSE circuit_state END,
         circuit_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE circuit_since END,
         circuit_probe_at = CASE WHEN $5 AND NOT enabled THEN NULL ELSE circuit_probe_at END,
         circuit_probes = CASE WHEN $5 AND NOT enabled THEN 0 ELSE circuit_probes END,
         consecutive_failures = CASE WHEN $5 AND NOT enabled THEN 0 ELSE consecutive_failures END,
         failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END,
         paused_until = CASE WHEN $5 AND NOT enabled THEN NULL ELSE paused_until END,
         token = CASE WHEN $3::boolean THEN $4 ELSE token END,
         enabled = COALESCE($5, enabled),
         disabled_reason = CASE WHEN COALESCE($5, enabled) THEN NULL ELSE COALESCE(disabled_reason, $7) END,
         disabled_by_operator = CASE WHEN COALESCE($5, enabled) THEN false
                                     WHEN NOT $5 AND NOT $17::boolean THEN true
                                     ELSE disabled_by_operator END,
         description = COALESCE($6, description),
         filter = COALESCE($8::jsonb, filter),
         event_types = CASE WHEN $9::boolean THEN $10::text[] ELSE event_types END,
         headers = COALESCE($15::jsonb, headers),
         secret_headers = COALESCE($16::jsonb, secret_headers),
         destination = CASE WHEN $19::boolean THEN $20::jsonb ELSE destination END,
         destination_secrets = CASE WHEN $19::boolean THEN $21 ELSE destination_secrets END,
         updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL
         AND NOT ($17::boolean AND COALESCE($5, false) AND NOT enabled AND disabled_by_operator)
         AND ($18::text IS NULL OR url = $18)
       RETURNING *;

-- delete-subscription
-- Sent by SubscriptionRepository.delete.
-- $1: its id
WITH deleted AS (
         UPDATE subscriptions SET deleted_at = now(), enabled = false, disabled_reason = 'deleted', token = NULL,
                previous_secret = NULL, updated_at = now()
         WHERE id = $1 AND deleted_at IS NULL RETURNING id
       ), closed AS (
         UPDATE deliveries d SET status = 'failed', leased_until = NULL, updated_at = now()
         FROM deleted WHERE d.subscription_id = deleted.id AND d.status = 'pending'
       )
       SELECT id FROM deleted;

-- rotate-secret
-- Sent by SubscriptionRepository.rotateSecret.
-- $1: its id
-- $2: the new secret (or private key), sealed
-- $3: how long the old one keeps signing, ms
-- $4: the new public key, or null
UPDATE subscriptions SET previous_secret = secret, secret = $2,
         previous_public_key = public_key, public_key = $4,
         previous_secret_expires_at = now() + $3 * interval '1 millisecond', updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL RETURNING *;

-- find-sendable
-- Sent by SubscriptionRepository.findSendable.
-- $1: its id
SELECT s.url, s.token, s.secret, s.max_deliveries_per_second, s.max_concurrency, s.headers, s.secret_headers, s.destination, s.destination_secrets,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret, s.kind, s.event_types FROM subscriptions s
       WHERE s.id = $1 AND s.deleted_at IS NULL;

-- load-subscribers
-- Sent by SubscriptionRepository.load.
SELECT (SELECT version FROM subscription_versions)::text AS version,
       coalesce(json_agg(json_build_object('id', s.id, 'url', s.url, 'token', s.token, 'secret', s.secret, 'max_deliveries_per_second', s.max_deliveries_per_second, 'max_concurrency', s.max_concurrency, 'headers', s.headers, 'secret_headers', s.secret_headers, 'destination', s.destination, 'destination_secrets', s.destination_secrets,
  'previous_secret', s.previous_secret, 'previous_until', s.previous_secret_expires_at, 'filter', s.filter,
  'kind', s.kind)
         ORDER BY s.created_at, s.id), '[]') AS subscribers
FROM subscriptions s WHERE s.enabled AND s.deleted_at IS NULL;

-- load-changed-subscribers
-- Sent by SubscriptionRepository.loadChanges.
-- $1: the worker's version
WITH since AS MATERIALIZED (
  SELECT version, subscription_id FROM subscription_changes WHERE version > $1::bigint
)
SELECT (SELECT version FROM subscription_versions)::text AS version,
       (SELECT count(*) FROM since) = (SELECT version FROM subscription_versions) - $1::bigint AS complete,
       (SELECT coalesce(json_agg(DISTINCT subscription_id), '[]') FROM since) AS changed,
       coalesce(json_agg(json_build_object('id', s.id, 'url', s.url, 'token', s.token, 'secret', s.secret, 'max_deliveries_per_second', s.max_deliveries_per_second, 'max_concurrency', s.max_concurrency, 'headers', s.headers, 'secret_headers', s.secret_headers, 'destination', s.destination, 'destination_secrets', s.destination_secrets,
  'previous_secret', s.previous_secret, 'previous_until', s.previous_secret_expires_at, 'filter', s.filter,
  'kind', s.kind)), '[]')
         AS subscribers
FROM subscriptions s WHERE s.enabled AND s.deleted_at IS NULL AND s.id IN (SELECT subscription_id FROM since);

-- subscriptions-version
-- Sent by SubscriptionChanges.poll.
SELECT version::text AS version FROM subscription_versions;

-- listen-subscriptions
-- Sent by SubscriptionChanges.poll.
LISTEN plant_store_subscriptions;
