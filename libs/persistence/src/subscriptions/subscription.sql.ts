import { SUBSCRIPTION_SEND_COLUMNS, SUBSCRIPTION_SEND_FIELDS } from '../sql/fragments/outbox';
import { statement } from '../sql/statement';

export const CREATE_SUBSCRIPTION = statement({
  name: 'create-subscription',
  runBy: 'SubscriptionRepository.create',
  params: [
    'its id (chosen by the caller: the sealed values are bound to it)',
    'the URL deliveries go to',
    'its token, sealed, or null',
    'its signing secret (or private key), sealed',
    'symmetric or asymmetric',
    'the public key beside an asymmetric key, or null',
    'a description, or null',
    'its filter (jsonb)',
    'plants or operational',
    'operational: the event types it receives, or null for all',
    'maxDeliveriesPerSecond, or null',
    'maxConcurrency, or null',
    'its custom headers (jsonb, name -> value)',
    'its secret headers (jsonb, name -> sealed value)',
    "a broker destination's settings (jsonb)",
    "a broker destination's secrets, sealed JSON, or null",
  ],
  text: `INSERT INTO subscriptions (id, url, token, secret, signature, public_key, description, filter, kind, event_types,
                                max_deliveries_per_second, max_concurrency, headers, secret_headers, destination,
                                destination_secrets)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING *`,
});

export const LIST_SUBSCRIPTIONS = statement({
  name: 'list-subscriptions',
  runBy: 'SubscriptionRepository.list',
  params: [],
  text: 'SELECT * FROM subscriptions WHERE deleted_at IS NULL ORDER BY created_at, id',
});

export const FIND_SUBSCRIPTION = statement({
  name: 'find-subscription',
  runBy: 'SubscriptionRepository.findById',
  params: ['its id'],
  text: 'SELECT * FROM subscriptions WHERE id = $1 AND deleted_at IS NULL',
});

/**
 * A partial change: a null leaves its column as it is. Disabling keeps (or sets) a reason; enabling a disabled one
 * clears it and starts its health afresh (circuit closed, no failures, no pause): the admin says it is fixed. An
 * admin's disable marks it the operator's (disabled_by_operator, migration 24), and then a portal link's enable
 * changes nothing (no row: the caller says why); a portal link's own disable leaves the mark as it is. Headers and
 * a token are written whole, as decided for the URL the caller read: if the URL changed since, nothing changes, so
 * credentials meant for one URL never land on another (a portal link's change of it drops them).
 */
export const UPDATE_SUBSCRIPTION = statement({
  name: 'update-subscription',
  runBy: 'SubscriptionRepository.update',
  params: [
    'its id',
    'the new URL, or null to keep it',
    'whether the token changes',
    'the new token, sealed, or null to remove it',
    'enabled, or null to keep it',
    'the new description, or null to keep it',
    'the reason kept when disabled (by an admin, or through a portal link)',
    'the new filter (jsonb), or null to keep it',
    'whether the event types change',
    'the new event types, or null for all',
    'whether maxDeliveriesPerSecond changes',
    'the new maxDeliveriesPerSecond, or null to remove it',
    'whether maxConcurrency changes',
    'the new maxConcurrency, or null to remove it',
    'all its custom headers now (jsonb), or null to keep them',
    'all its secret headers now (jsonb, sealed values), or null to keep them',
    'whether a portal link makes the change (it cannot enable what the operator disabled)',
    'the URL the headers and token written were decided for (else no change), or null when neither is written',
    "whether the destination's settings and secrets change (with the URL: they go with it)",
    "the destination's settings now (jsonb)",
    "the destination's secrets now, sealed JSON, or null",
  ],
  text: `UPDATE subscriptions SET
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
       RETURNING *`,
});

/** Marks it deleted (kept as evidence) and stops it at once: disabled, token and old secret dropped, pending deliveries failed. */
export const DELETE_SUBSCRIPTION = statement({
  name: 'delete-subscription',
  runBy: 'SubscriptionRepository.delete',
  params: ['its id'],
  text: `WITH deleted AS (
         UPDATE subscriptions SET deleted_at = now(), enabled = false, disabled_reason = 'deleted', token = NULL,
                previous_secret = NULL, updated_at = now()
         WHERE id = $1 AND deleted_at IS NULL RETURNING id
       ), closed AS (
         UPDATE deliveries d SET status = 'failed', leased_until = NULL, updated_at = now()
         FROM deleted WHERE d.subscription_id = deleted.id AND d.status = 'pending'
       )
       SELECT id FROM deleted`,
});

export const ROTATE_SECRET = statement({
  name: 'rotate-secret',
  runBy: 'SubscriptionRepository.rotateSecret',
  params: [
    'its id',
    'the new secret (or private key), sealed',
    'how long the old one keeps signing, ms',
    'the new public key, or null',
  ],
  text: `UPDATE subscriptions SET previous_secret = secret, secret = $2,
         previous_public_key = public_key, public_key = $4,
         previous_secret_expires_at = now() + $3 * interval '1 millisecond', updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL RETURNING *`,
});

/** The same columns and signing rule as a delivery's (SUBSCRIPTION_SEND_COLUMNS), for a test send. */
export const FIND_SENDABLE = statement({
  name: 'find-sendable',
  runBy: 'SubscriptionRepository.findSendable',
  params: ['its id'],
  text: `SELECT ${SUBSCRIPTION_SEND_COLUMNS}, s.kind, s.event_types FROM subscriptions s
       WHERE s.id = $1 AND s.deleted_at IS NULL`,
});

/** What a worker holds of a subscription (alias `s`), credentials sealed: LoadedSubscriber in the repository. */
const SUBSCRIBER_JSON = `json_build_object('id', s.id, ${SUBSCRIPTION_SEND_FIELDS.map((c) => `'${c}', s.${c}`).join(', ')},
  'previous_secret', s.previous_secret, 'previous_until', s.previous_secret_expires_at, 'filter', s.filter,
  'kind', s.kind)`;

/**
 * The enabled subscriptions a worker keeps in memory, and the version they are at, from one snapshot (one
 * statement): a change committed after it bumps the version past the one returned. Every column a delivery is
 * sent with (SUBSCRIPTION_SEND_COLUMNS) and who receives what (kind, filter); migration 23's trigger watches
 * the same columns.
 */
export const LOAD_SUBSCRIBERS = statement({
  name: 'load-subscribers',
  runBy: 'SubscriptionRepository.load',
  params: [],
  text: `SELECT (SELECT version FROM subscription_versions)::text AS version,
       coalesce(json_agg(${SUBSCRIBER_JSON}
         ORDER BY s.created_at, s.id), '[]') AS subscribers
FROM subscriptions s WHERE s.enabled AND s.deleted_at IS NULL`,
});

/**
 * What changed since a worker's copy (`$1`, its version), in one snapshot: the version now, the subscriptions the
 * versions since then changed (`changed`), those of them that are enabled with what a worker holds of them, and
 * whether the log still holds every version since (`complete`; else the worker loads them all).
 */
export const LOAD_CHANGED_SUBSCRIBERS = statement({
  name: 'load-changed-subscribers',
  runBy: 'SubscriptionRepository.loadChanges',
  params: ["the worker's version"],
  text: `WITH since AS MATERIALIZED (
  SELECT version, subscription_id FROM subscription_changes WHERE version > $1::bigint
)
SELECT (SELECT version FROM subscription_versions)::text AS version,
       (SELECT count(*) FROM since) = (SELECT version FROM subscription_versions) - $1::bigint AS complete,
       (SELECT coalesce(json_agg(DISTINCT subscription_id), '[]') FROM since) AS changed,
       coalesce(json_agg(${SUBSCRIBER_JSON}), '[]')
         AS subscribers
FROM subscriptions s WHERE s.enabled AND s.deleted_at IS NULL AND s.id IN (SELECT subscription_id FROM since)`,
});

/** The subscriptions' version alone: a worker's poll (its copy is current while this is the same). */
export const SUBSCRIPTIONS_VERSION = statement({
  name: 'subscriptions-version',
  runBy: 'SubscriptionChanges.poll',
  params: [],
  text: `SELECT version::text AS version FROM subscription_versions`,
});

/** A worker's connection for the subscriptions' changes: migration 23's trigger notifies this channel. */
export const LISTEN_SUBSCRIPTIONS = statement({
  name: 'listen-subscriptions',
  runBy: 'SubscriptionChanges.poll',
  params: [],
  text: `LISTEN plant_store_subscriptions`,
});
