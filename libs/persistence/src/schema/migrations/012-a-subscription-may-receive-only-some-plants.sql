-- a subscription may receive only some plants
-- SubscriptionFilter ({tags?, plantIds?: {min?, max?}}), applied by the ingest statement's fan-out.

      ALTER TABLE subscriptions ADD COLUMN filter jsonb NOT NULL DEFAULT '{}';
