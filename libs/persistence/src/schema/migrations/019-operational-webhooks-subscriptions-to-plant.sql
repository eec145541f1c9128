-- operational webhooks: subscriptions to Plant Store's own events
-- A subscription is of one kind for good: `plants` (New Plant webhooks, as before) or `operational` (Plant
-- Store's own events: subscription.disabled, delivery.exhausted, ...; `event_types` null means all). An
-- operational event is written as one pending delivery per operational subscriber by the statement that makes
-- it (the same transaction), and sent, retried and listed like any delivery: it has no plant, so plant_id is
-- nullable, and event_type says what it is (null: a New Plant). Constant defaults: no table is rewritten.

      ALTER TABLE subscriptions
        ADD COLUMN kind text NOT NULL DEFAULT 'plants' CHECK (kind IN ('plants', 'operational')),
        ADD COLUMN event_types text[];
      ALTER TABLE deliveries ALTER COLUMN plant_id DROP NOT NULL, ADD COLUMN event_type text;
