-- Subscriptions: who receives deliveries, with what, and the version of them each worker holds in memory.

-- @name create-subscription
-- Sent by SubscriptionRepository.create.
-- :id its id (chosen by the caller: the sealed values are bound to it)
-- :url the URL deliveries go to
-- :token its token, sealed, or null
-- :secret its signing secret (or private key), sealed
-- :signature symmetric or asymmetric
-- :publicKey the public key beside an asymmetric key, or null
-- :description a description, or null
-- :filter its filter (jsonb)
-- :kind plants or operational
-- :eventTypes operational: the event types it receives, or null for all
-- :maxDeliveriesPerSecond maxDeliveriesPerSecond, or null
-- :maxConcurrency maxConcurrency, or null
-- :headers its custom headers (jsonb, name -> value)
-- :secretHeaders its secret headers (jsonb, name -> sealed value)
-- :destination a broker destination's settings (jsonb)
-- :destinationSecrets a broker destination's secrets, sealed JSON, or null
INSERT INTO subscriptions (id, url, token, secret, signature, public_key, description, filter, kind, event_types,
                           max_deliveries_per_second, max_concurrency, headers, secret_headers, destination,
                           destination_secrets)
VALUES (:id, :url, :token, :secret, :signature, :publicKey, :description, :filter, :kind, :eventTypes,
        :maxDeliveriesPerSecond, :maxConcurrency, :headers, :secretHeaders, :destination, :destinationSecrets)
RETURNING *;

-- @name list-subscriptions
-- Sent by SubscriptionRepository.list.
SELECT * FROM subscriptions WHERE deleted_at IS NULL ORDER BY created_at, id;

-- @name find-subscription
-- Sent by SubscriptionRepository.findById.
-- :id its id
SELECT * FROM subscriptions WHERE id = :id AND deleted_at IS NULL;

-- @name update-subscription
-- A partial change: a null leaves its column as it is. Disabling keeps (or sets) a reason; enabling a disabled one
-- clears it and starts its health afresh (circuit closed, no failures, no pause): the admin says it is fixed. An
-- admin's disable marks it the operator's (disabled_by_operator, migration 24), and then a portal link's enable
-- changes nothing (no row: the caller says why); a portal link's own disable leaves the mark as it is. Headers and
-- a token are written whole, as decided for the URL the caller read: if the URL changed since, nothing changes, so
-- credentials meant for one URL never land on another (a portal link's change of it drops them). Sent by
-- SubscriptionRepository.update.
-- :id its id
-- :url the new URL, or null to keep it
-- :tokenChanges whether the token changes
-- :token the new token, sealed, or null to remove it
-- :enabled enabled, or null to keep it
-- :description the new description, or null to keep it
-- :disabledReason the reason kept when disabled (by an admin, or through a portal link)
-- :filter the new filter (jsonb), or null to keep it
-- :eventTypesChange whether the event types change
-- :eventTypes the new event types, or null for all
-- :rateChanges whether maxDeliveriesPerSecond changes
-- :maxDeliveriesPerSecond the new maxDeliveriesPerSecond, or null to remove it
-- :concurrencyChanges whether maxConcurrency changes
-- :maxConcurrency the new maxConcurrency, or null to remove it
-- :headers all its custom headers now (jsonb), or null to keep them
-- :secretHeaders all its secret headers now (jsonb, sealed values), or null to keep them
-- :byPortal whether a portal link makes the change (it cannot enable what the operator disabled)
-- :credentialsFor the URL the headers and token written were decided for (else no change), or null when neither is written
-- :destinationChanges whether the destination's settings and secrets change (with the URL: they go with it)
-- :destination the destination's settings now (jsonb)
-- :destinationSecrets the destination's secrets now, sealed JSON, or null
UPDATE subscriptions SET
  url = COALESCE(:url, url),
  max_deliveries_per_second = CASE WHEN :rateChanges::boolean THEN :maxDeliveriesPerSecond::float8
                                   ELSE max_deliveries_per_second END,
  max_concurrency = CASE WHEN :concurrencyChanges::boolean THEN :maxConcurrency::int ELSE max_concurrency END,
  circuit_state = CASE WHEN :enabled AND NOT enabled THEN 'closed' ELSE circuit_state END,
  circuit_since = CASE WHEN :enabled AND NOT enabled THEN NULL ELSE circuit_since END,
  circuit_probe_at = CASE WHEN :enabled AND NOT enabled THEN NULL ELSE circuit_probe_at END,
  circuit_probes = CASE WHEN :enabled AND NOT enabled THEN 0 ELSE circuit_probes END,
  consecutive_failures = CASE WHEN :enabled AND NOT enabled THEN 0 ELSE consecutive_failures END,
  failing_since = CASE WHEN :enabled AND NOT enabled THEN NULL ELSE failing_since END,
  paused_until = CASE WHEN :enabled AND NOT enabled THEN NULL ELSE paused_until END,
  token = CASE WHEN :tokenChanges::boolean THEN :token ELSE token END,
  enabled = COALESCE(:enabled, enabled),
  disabled_reason = CASE WHEN COALESCE(:enabled, enabled) THEN NULL ELSE COALESCE(disabled_reason, :disabledReason) END,
  disabled_by_operator = CASE WHEN COALESCE(:enabled, enabled) THEN false
                              WHEN NOT :enabled AND NOT :byPortal::boolean THEN true
                              ELSE disabled_by_operator END,
  description = COALESCE(:description, description),
  filter = COALESCE(:filter::jsonb, filter),
  event_types = CASE WHEN :eventTypesChange::boolean THEN :eventTypes::text[] ELSE event_types END,
  headers = COALESCE(:headers::jsonb, headers),
  secret_headers = COALESCE(:secretHeaders::jsonb, secret_headers),
  destination = CASE WHEN :destinationChanges::boolean THEN :destination::jsonb ELSE destination END,
  destination_secrets = CASE WHEN :destinationChanges::boolean THEN :destinationSecrets ELSE destination_secrets END,
  updated_at = now()
WHERE id = :id AND deleted_at IS NULL
  AND NOT (:byPortal::boolean AND COALESCE(:enabled, false) AND NOT enabled AND disabled_by_operator)
  AND (:credentialsFor::text IS NULL OR url = :credentialsFor)
RETURNING *;

-- @name delete-subscription
-- Marks it deleted (kept as evidence) and stops it at once: disabled, token and old secret dropped, pending
-- deliveries failed. Sent by SubscriptionRepository.delete.
-- :id its id
WITH deleted AS (
  UPDATE subscriptions SET deleted_at = now(), enabled = false, disabled_reason = 'deleted', token = NULL,
         previous_secret = NULL, updated_at = now()
  WHERE id = :id AND deleted_at IS NULL RETURNING id
), closed AS (
  UPDATE deliveries d SET status = 'failed', leased_until = NULL, updated_at = now()
  FROM deleted WHERE d.subscription_id = deleted.id AND d.status = 'pending'
)
SELECT id FROM deleted;

-- @name rotate-secret
-- Sent by SubscriptionRepository.rotateSecret.
-- :id its id
-- :secret the new secret (or private key), sealed
-- :overlapMs how long the old one keeps signing, ms
-- :publicKey the new public key, or null
UPDATE subscriptions SET previous_secret = secret, secret = :secret,
  previous_public_key = public_key, public_key = :publicKey,
  previous_secret_expires_at = now() + :overlapMs * interval '1 millisecond', updated_at = now()
WHERE id = :id AND deleted_at IS NULL RETURNING *;

-- @name find-sendable
-- A test send's subscription: what its deliveries are sent with (subscription_send_settings, migration 35) and
-- what it receives. Sent by SubscriptionRepository.findSendable.
-- :id its id
SELECT ss.*, s.kind, s.event_types
FROM subscriptions s JOIN subscription_send_settings ss ON ss.subscription_id = s.id
WHERE s.id = :id AND s.deleted_at IS NULL;

-- @name load-subscribers
-- The enabled subscriptions a worker keeps in memory (worker_subscribers, migration 35), and the version they are
-- at, from one snapshot (one statement): a change committed after it bumps the version past the one returned.
-- Sent by SubscriptionRepository.load.
SELECT (SELECT version FROM subscription_versions)::text AS version,
       coalesce(json_agg(w.subscriber ORDER BY w.created_at, w.id), '[]') AS subscribers
FROM worker_subscribers w;

-- @name load-changed-subscribers
-- What changed since a worker's copy, in one snapshot: the version now, the subscriptions the versions since then
-- changed (`changed`), those of them that are enabled with what a worker holds of them, and whether the log still
-- holds every version since (`complete`; else the worker loads them all). Sent by
-- SubscriptionRepository.loadChanges.
-- :version the worker's version
WITH since AS MATERIALIZED (
  SELECT version, subscription_id FROM subscription_changes WHERE version > :version::bigint
)
SELECT (SELECT version FROM subscription_versions)::text AS version,
       (SELECT count(*) FROM since) = (SELECT version FROM subscription_versions) - :version::bigint AS complete,
       (SELECT coalesce(json_agg(DISTINCT subscription_id), '[]') FROM since) AS changed,
       coalesce(json_agg(w.subscriber), '[]') AS subscribers
FROM worker_subscribers w WHERE w.id IN (SELECT subscription_id FROM since);

-- @name subscriptions-version
-- The subscriptions' version alone: a worker's poll (its copy is current while this is the same). Sent by
-- SubscriptionChanges.poll.
SELECT version::text AS version FROM subscription_versions;

-- @name listen-subscriptions
-- A worker's connection for the subscriptions' changes: migration 23's trigger notifies this channel. Sent by
-- SubscriptionChanges.poll.
LISTEN plant_store_subscriptions;
