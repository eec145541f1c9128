import type { Schema } from '@app/contracts';
import { SubscriptionUpdateBody } from '@app/contracts';
import { destinationKindOf, urlForReader, urlOriginAndPath } from '@app/delivery';
import { Issued, NewAuditEvent, SubscriptionRow } from '@app/persistence';

/**
 * A subscription as the admin API returns it (the document's Subscription, through the generated types): never a
 * secret, a private key or the token (all sealed in the database); the public key of an asymmetric one, which is
 * meant to be shared.
 */
export type SubscriptionDto = Schema<'Subscription'>;

/** Only when it is created or rotated: a symmetric subscription's signing secret, shown once. */
export type SubscriptionWithSecretDto = Schema<'SubscriptionWithSecret'>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * `wholeUrl` for a caller that may change the subscription (a write token); a read token sees the URL without
 * its user-info and query values (urlForReader), which may be credentials.
 */
export const mapSubscription = (r: SubscriptionRow, wholeUrl = true): SubscriptionDto => ({
  id: r.id,
  url: wholeUrl ? r.url : urlForReader(r.url),
  description: r.description,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  hasToken: r.token !== null,
  destination: {
    kind: destinationKindOf(r.url),
    hasCredentials: r.destination_secrets !== null,
    settings: r.destination,
  },
  filter: r.filter,
  kind: r.kind,
  eventTypes: r.event_types,
  headers: r.headers,
  secretHeaderNames: Object.keys(r.secret_headers).sort(),
  signature: r.signature,
  publicKey: r.public_key,
  // Only while the rotated-out key still signs beside the new one.
  previousPublicKey:
    r.previous_public_key && r.previous_secret_expires_at && r.previous_secret_expires_at > new Date()
      ? r.previous_public_key
      : null,
  maxDeliveriesPerSecond: r.max_deliveries_per_second,
  maxConcurrency: r.max_concurrency,
  pausedUntil: r.paused_until && r.paused_until > new Date() ? r.paused_until.toISOString() : null,
  circuit: {
    state: r.circuit_state,
    since: iso(r.circuit_since),
    lastError: r.circuit_last_error,
    consecutiveFailures: r.consecutive_failures,
    failingSince: iso(r.failing_since),
    nextProbeAt: r.circuit_state === 'open' ? iso(r.circuit_probe_at) : null,
  },
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** The private key of an asymmetric subscription never leaves: its public key is in the mapping already. */
export const mapIssued = ({ row, secret }: Issued): SubscriptionWithSecretDto =>
  row.signature === 'symmetric' ? { ...mapSubscription(row), secret } : mapSubscription(row);

/**
 * What a change did, for the audit trail: the fields changed, never a token's value, and of a URL only its
 * origin and path (the trail is kept for good, and read tokens read it).
 */
export function updateAudit(body: SubscriptionUpdateBody): Pick<NewAuditEvent, 'action' | 'details'> {
  const action =
    body.enabled === false
      ? 'subscription.disabled'
      : body.enabled === true
        ? 'subscription.enabled'
        : 'subscription.changed';
  const details: Record<string, unknown> = { changed: Object.keys(body).sort() };
  if (body.url !== undefined) details.url = urlOriginAndPath(body.url);
  if (body.description !== undefined) details.description = body.description;
  if (body.filter !== undefined) details.filter = body.filter;
  if (body.eventTypes !== undefined) details.eventTypes = body.eventTypes ?? 'all';
  if (body.maxDeliveriesPerSecond !== undefined) details.maxDeliveriesPerSecond = body.maxDeliveriesPerSecond;
  if (body.maxConcurrency !== undefined) details.maxConcurrency = body.maxConcurrency;
  if ('token' in body) details.token = body.token === null ? 'removed' : 'replaced';
  // Names only: a header's value may be a credential.
  if (body.headers !== undefined) details.headers = Object.keys(body.headers).sort();
  if (body.secretHeaders !== undefined) details.secretHeaders = Object.keys(body.secretHeaders).sort();
  return { action, details };
}
