-- subscriptions, deliveries and attempts

      CREATE TABLE subscriptions (
        id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        url           text NOT NULL,
        token         text,
        secret        text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        description   text,
        enabled       boolean NOT NULL DEFAULT true,
        disabled_reason text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE deliveries (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        event_id        text NOT NULL,
        plant_id        bigint NOT NULL,
        body            text NOT NULL,
        event_time      timestamptz NOT NULL,
        status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        leased_until    timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        UNIQUE (subscription_id, event_id)
      ) WITH (fillfactor = 70); -- room on each page, so a claim's lease update stays a HOT update (no index writes)
      CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX deliveries_plant_order ON deliveries (subscription_id, plant_id, seq) WHERE status = 'pending';
      -- newest-first listing reads the UNIQUE (seq) index backwards: no index of its own

      CREATE TABLE delivery_attempts (
        id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id   uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
        attempted_at  timestamptz NOT NULL,
        status        integer,
        latency_ms    integer NOT NULL,
        error         text,
        response_body text
      );
      CREATE INDEX delivery_attempts_by_delivery ON delivery_attempts (delivery_id, id);
