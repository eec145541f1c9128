import { statement } from '../sql/statement';

export const CREATE_PORTAL_LINK = statement({
  name: 'create-portal-link',
  runBy: 'PortalLinkRepository.create',
  params: [
    'the subscription it opens',
    "the token's SHA-256 (never the token)",
    'a description, or null',
    "who created it (an admin token's name)",
    'its lifetime in seconds',
  ],
  // Only for a subscription that exists: a deleted one gets no new link.
  text: `INSERT INTO portal_links (subscription_id, token_digest, description, created_by, expires_at)
       SELECT id, $2, $3, $4, now() + make_interval(secs => $5) FROM subscriptions WHERE id = $1 AND deleted_at IS NULL
       RETURNING *`,
});

export const LIST_PORTAL_LINKS = statement({
  name: 'list-portal-links',
  runBy: 'PortalLinkRepository.list',
  params: ['the subscription'],
  text: 'SELECT * FROM portal_links WHERE subscription_id = $1 ORDER BY created_at DESC, id',
});

export const REVOKE_PORTAL_LINK = statement({
  name: 'revoke-portal-link',
  runBy: 'PortalLinkRepository.revoke',
  params: ['the subscription', 'the link', "who revoked it (an admin token's name)"],
  // Revoking twice keeps the first revocation's time and author.
  text: `UPDATE portal_links SET revoked_at = COALESCE(revoked_at, now()), revoked_by = COALESCE(revoked_by, $3)
       WHERE subscription_id = $1 AND id = $2 RETURNING *`,
});

/**
 * The link a token opens, whatever its state (the caller says why it is refused), with whether its subscription
 * was deleted, and whether it is operational (no portal link opens one: a link made before that rule is refused).
 * Its last use is written at most once a minute, so a page that polls costs one read per request.
 */
export const FIND_PORTAL_LINK_BY_DIGEST = statement({
  name: 'find-portal-link-by-digest',
  runBy: 'PortalLinkRepository.findByToken',
  params: ["the presented token's SHA-256"],
  text: `WITH found AS (
         SELECT l.*, (s.deleted_at IS NOT NULL) AS subscription_deleted,
                (s.kind = 'operational') AS subscription_operational, now() AS checked_at
         FROM portal_links l JOIN subscriptions s ON s.id = l.subscription_id WHERE l.token_digest = $1
       ), touched AS (
         UPDATE portal_links p SET last_used_at = found.checked_at FROM found
         WHERE p.id = found.id AND found.revoked_at IS NULL AND found.expires_at > found.checked_at
           AND NOT found.subscription_deleted AND NOT found.subscription_operational
           AND (found.last_used_at IS NULL OR found.last_used_at < found.checked_at - interval '1 minute')
         RETURNING p.id
       )
       SELECT found.* FROM found`,
});
