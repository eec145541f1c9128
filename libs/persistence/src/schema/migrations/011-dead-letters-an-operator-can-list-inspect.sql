-- dead letters an operator can list, inspect, redrive and discard
-- Every record of plant.created.dlq, copied by the worker's dead-letter archive (one row per DLQ record:
-- the unique key makes the copy idempotent across restarts and replicas), with what an operator did to it.
-- The original key, value and headers are kept as bytes: poison is whatever it was.

      CREATE TABLE dead_letters (
        id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        dlq_partition    integer NOT NULL,
        dlq_offset       bigint NOT NULL,
        dead_lettered_at timestamptz NOT NULL,
        reason           text NOT NULL,
        origin_topic     text,
        origin_partition integer,
        origin_offset    bigint,
        key              bytea,
        value            bytea,
        headers          jsonb NOT NULL DEFAULT '{}',  -- the original headers, each value base64
        truncated        boolean NOT NULL DEFAULT false,
        status           text NOT NULL DEFAULT 'dead' CHECK (status IN ('dead', 'redriving', 'redriven', 'discarded')),
        changed_at       timestamptz,
        changed_by       text,                         -- the admin token's name, never the token
        UNIQUE (dlq_partition, dlq_offset)
      );
      CREATE INDEX dead_letters_by_status ON dead_letters (status, id);
