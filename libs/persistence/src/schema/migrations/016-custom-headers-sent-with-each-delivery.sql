-- custom headers sent with each delivery
-- A subscription's own headers (name -> value), sent with every delivery: `headers` in the clear, shown to
-- operators; `secret_headers` sealed like the token (secrets/, bound to the subscription and the header's
-- name), never shown again. Constant defaults: no rewrite.

      ALTER TABLE subscriptions
        ADD COLUMN headers jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN secret_headers jsonb NOT NULL DEFAULT '{}';
