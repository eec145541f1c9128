-- which subscription each version of the subscriptions changed: a worker reloads that one alone
-- Every change bumped the one version and every worker reloaded every subscription (opening each one's
-- credentials) for it: a portal link changing its own subscription in a loop cost everyone (issue #36). The
-- version now also names the subscription it changed, so a worker one or a few versions behind reads those
-- subscriptions alone. Versions have no gaps (each is one UPDATE of one row, rolled back with its change), so
-- a worker knows whether the log still holds every change since its copy: the last 1,000 are kept.

      CREATE TABLE subscription_changes (
        version bigint PRIMARY KEY,
        subscription_id uuid NOT NULL
      );
      CREATE OR REPLACE FUNCTION bump_subscription_version() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE v bigint;
      BEGIN
        UPDATE subscription_versions SET version = version + 1 RETURNING version INTO v;
        INSERT INTO subscription_changes (version, subscription_id)
        VALUES (v, CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
        DELETE FROM subscription_changes WHERE version <= v - 1000;
        PERFORM pg_notify('plant_store_subscriptions', v::text);
        RETURN NULL;
      END $$;
