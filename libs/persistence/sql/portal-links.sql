-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every portal-links statement the repositories send, exactly as sent, with what each parameter means.

-- create-portal-link
-- Sent by PortalLinkRepository.create.
-- $1: the subscription it opens
-- $2: the token's SHA-256 (never the token)
-- $3: a description, or null
-- $4: who created it (an admin token's name)
-- $5: its lifetime in seconds
INSERT INTO portal_links (subscription_id, token_digest, description, created_by, expires_at)
       SELECT id, $2, $3, $4, now() + make_interval(secs => $5) FROM subscriptions WHERE id = $1 AND deleted_at IS NULL
       RETURNING *;

-- list-portal-links
-- Sent by PortalLinkRepository.list.
-- $1: the subscription
SELECT * FROM portal_links WHERE subscription_id = $1 ORDER BY created_at DESC, id;

-- revoke-portal-link
-- Sent by PortalLinkRepository.revoke.
-- $1: the subscription
-- $2: the link
-- $3: who revoked it (an admin token's name)
UPDATE portal_links SET revoked_at = COALESCE(revoked_at, now()), revoked_by = COALESCE(revoked_by, $3)
       WHERE subscription_id = $1 AND id = $2 RETURNING *;

-- find-portal-link-by-digest
-- Sent by PortalLinkRepository.findByToken.
-- $1: the presented token's SHA-256
WITH found AS (
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
       SELECT found.* FROM found;
