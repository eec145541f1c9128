-- plants and processed events

      CREATE TABLE plants (
        id              bigint PRIMARY KEY,
        seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- insertion order, for newest-first pages
        name            text NOT NULL,
        tag             text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        last_event_id   text NOT NULL,
        last_event_time timestamptz NOT NULL
      );

      -- One row per applied event id: a redelivered or re-sent event finds its id here and is skipped.
      CREATE TABLE processed_events (
        event_id     text PRIMARY KEY,
        plant_id     bigint NOT NULL,
        event_time   timestamptz NOT NULL,
        kafka_topic  text NOT NULL,
        kafka_partition integer NOT NULL,
        kafka_offset bigint NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now()
      );
