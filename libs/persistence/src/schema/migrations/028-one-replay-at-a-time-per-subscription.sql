-- one replay at a time per subscription
-- A replay call holds its subscription's row while it runs; a second one meanwhile, from any gateway, is
-- refused. `until` bounds the hold, so a gateway that dies mid-call frees it by itself. A table of its own:
-- a change to a subscription's row would make every worker reload the subscriptions.

      CREATE TABLE subscription_replays (
        subscription_id uuid PRIMARY KEY REFERENCES subscriptions (id) ON DELETE CASCADE,
        holder uuid NOT NULL,
        until timestamptz NOT NULL
      );
