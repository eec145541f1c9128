-- credentials: signature schemes, public keys, the audit trail
-- Secrets and tokens are sealed in place by the worker's setup (secrets/seal-credentials.ts), which needs
-- SECRETS_KEY and so cannot be SQL; it is idempotent and also re-seals under a rotated key.

      ALTER TABLE subscriptions
        ADD COLUMN signature text NOT NULL DEFAULT 'symmetric' CHECK (signature IN ('symmetric', 'asymmetric')),
        ADD COLUMN public_key text,
        ADD COLUMN previous_public_key text;

      CREATE TABLE audit_events (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at              timestamptz NOT NULL DEFAULT now(),
        actor           text NOT NULL,   -- the admin token's name or fingerprint, never the token
        action          text NOT NULL,
        subscription_id uuid,            -- kept after the subscription is deleted: that is what it is for
        delivery_id     uuid,
        details         jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_events_by_subscription ON audit_events (subscription_id, id);
