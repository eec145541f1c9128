-- destinations beyond HTTP: a broker's settings and its sealed credentials
-- A subscription's URL scheme selects where its New Plants go (docs/destinations.md): an HTTP receiver, or the
-- subscriber's own Kafka, RabbitMQ, NATS, MQTT broker or Redis stream. `destination` holds what a URL cannot
-- carry well and is no secret (a CA, a client certificate, a SASL mechanism); `destination_secrets` the URL's
-- user and password and a client key, sealed like the token (secrets/), never shown. Constant defaults: no
-- rewrite. The version trigger watches both: a worker sends with what it holds of them.

      ALTER TABLE subscriptions
        ADD COLUMN destination jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN destination_secrets text;
      DROP TRIGGER subscriptions_changed ON subscriptions;
      CREATE TRIGGER subscriptions_changed AFTER UPDATE ON subscriptions
        FOR EACH ROW WHEN (
          (OLD.enabled, OLD.deleted_at, OLD.kind, OLD.url, OLD.token, OLD.secret, OLD.previous_secret,
           OLD.previous_secret_expires_at, OLD.filter, OLD.headers, OLD.secret_headers,
           OLD.max_deliveries_per_second, OLD.max_concurrency, OLD.destination, OLD.destination_secrets)
          IS DISTINCT FROM
          (NEW.enabled, NEW.deleted_at, NEW.kind, NEW.url, NEW.token, NEW.secret, NEW.previous_secret,
           NEW.previous_secret_expires_at, NEW.filter, NEW.headers, NEW.secret_headers,
           NEW.max_deliveries_per_second, NEW.max_concurrency, NEW.destination, NEW.destination_secrets))
        EXECUTE FUNCTION bump_subscription_version();
