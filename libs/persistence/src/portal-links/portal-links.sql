-- Portal links: a token that opens one subscription's own pages. Only the token's SHA-256 is stored.

-- @name create-portal-link
-- Only for a subscription that exists: a deleted one gets no new link. Sent by PortalLinkRepository.create.
-- :subscription the subscription it opens
-- :tokenDigest the token's SHA-256 (never the token)
-- :description a description, or null
-- :createdBy who created it (an admin token's name)
-- :lifetimeSeconds its lifetime in seconds
INSERT INTO portal_links (subscription_id, token_digest, description, created_by, expires_at)
  SELECT id, :tokenDigest, :description, :createdBy, now() + make_interval(secs => :lifetimeSeconds)
  FROM subscriptions WHERE id = :subscription AND deleted_at IS NULL
  RETURNING *;

-- @name list-portal-links
-- Sent by PortalLinkRepository.list.
-- :subscription the subscription
SELECT * FROM portal_links WHERE subscription_id = :subscription ORDER BY created_at DESC, id;

-- @name revoke-portal-link
-- Revoking twice keeps the first revocation's time and author. Sent by PortalLinkRepository.revoke.
-- :subscription the subscription
-- :id the link
-- :revokedBy who revoked it (an admin token's name)
UPDATE portal_links SET revoked_at = COALESCE(revoked_at, now()), revoked_by = COALESCE(revoked_by, :revokedBy)
  WHERE subscription_id = :subscription AND id = :id RETURNING *;

-- @name find-portal-link-by-digest
-- The link a token opens, whatever its state (the caller says why it is refused), with whether its subscription was
-- deleted, and whether it is operational (no portal link opens one: a link made before that rule is refused). Its
-- last use is written at most once a minute, so a page that polls costs one read per request. Sent by
-- PortalLinkRepository.findByToken.
-- :tokenDigest the presented token's SHA-256
WITH found AS (
  SELECT l.*, (s.deleted_at IS NOT NULL) AS subscription_deleted,
         (s.kind = 'operational') AS subscription_operational, now() AS checked_at
  FROM portal_links l JOIN subscriptions s ON s.id = l.subscription_id WHERE l.token_digest = :tokenDigest
), touched AS (
  UPDATE portal_links p SET last_used_at = found.checked_at FROM found
  WHERE p.id = found.id AND found.revoked_at IS NULL AND found.expires_at > found.checked_at
    AND NOT found.subscription_deleted AND NOT found.subscription_operational
    AND (found.last_used_at IS NULL OR found.last_used_at < found.checked_at - interval '1 minute')
  RETURNING p.id
)
SELECT found.* FROM found;
