-- portal links
-- A subscriber's own credential, scoped to one subscription: only the token's SHA-256 is kept (a token is 32
-- random bytes, so a plain digest is enough: nothing to guess), never the token. Expiring and revocable; the
-- links of a subscription go with its row (retention removes the row once its deliveries are gone).

      CREATE TABLE portal_links (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        token_digest    bytea NOT NULL UNIQUE,
        description     text,
        created_by      text NOT NULL,        -- the admin token's name, never the token
        created_at      timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz NOT NULL,
        revoked_at      timestamptz,
        revoked_by      text,
        last_used_at    timestamptz
      );
      CREATE INDEX portal_links_by_subscription ON portal_links (subscription_id, created_at);
