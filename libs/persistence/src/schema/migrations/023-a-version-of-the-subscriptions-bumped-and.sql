-- a version of the subscriptions, bumped and notified when what a worker sends with changes
-- Each worker keeps the enabled subscriptions in memory and fans a consumed batch out from them. Every change
-- to what it holds of a subscription (an admin's, a 410's, the breaker disabling one, a re-seal, retention
-- removing one) bumps this version and notifies 'plant_store_subscriptions' in the same transaction; a worker
-- reloads on the notification, and polls the version too, so a missed notification costs one poll. Only
-- those columns: the breaker's own (consecutive failures, circuit, pause) change with every batch of outcomes
-- and reach the workers by their heartbeat, so they must not make every copy out of date. Row-level: a
-- statement that changes no row (the record statements' 410 clause) bumps nothing.

      CREATE TABLE subscription_versions (
        one     boolean PRIMARY KEY DEFAULT true CHECK (one),
        version bigint NOT NULL
      );
      INSERT INTO subscription_versions (version) VALUES (1);
      CREATE FUNCTION bump_subscription_version() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE v bigint;
      BEGIN
        UPDATE subscription_versions SET version = version + 1 RETURNING version INTO v;
        PERFORM pg_notify('plant_store_subscriptions', v::text);
        RETURN NULL;
      END $$;
      CREATE TRIGGER subscriptions_added_or_removed AFTER INSERT OR DELETE ON subscriptions
        FOR EACH ROW EXECUTE FUNCTION bump_subscription_version();
      CREATE TRIGGER subscriptions_changed AFTER UPDATE ON subscriptions
        FOR EACH ROW WHEN (
          (OLD.enabled, OLD.deleted_at, OLD.kind, OLD.url, OLD.token, OLD.secret, OLD.previous_secret,
           OLD.previous_secret_expires_at, OLD.filter, OLD.headers, OLD.secret_headers,
           OLD.max_deliveries_per_second, OLD.max_concurrency)
          IS DISTINCT FROM
          (NEW.enabled, NEW.deleted_at, NEW.kind, NEW.url, NEW.token, NEW.secret, NEW.previous_secret,
           NEW.previous_secret_expires_at, NEW.filter, NEW.headers, NEW.secret_headers,
           NEW.max_deliveries_per_second, NEW.max_concurrency))
        EXECUTE FUNCTION bump_subscription_version();
