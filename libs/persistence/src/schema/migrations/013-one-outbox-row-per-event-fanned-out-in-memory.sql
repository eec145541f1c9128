-- one outbox row per event, fanned out in memory
-- Every delivery used to be an outbox row written at ingest (five index entries) and rewritten with its
-- outcome (a non-HOT update: status and next_attempt_at sit in the partial indexes): the biggest cost per
-- delivery, measured. Now ingest writes one row per changed event, a worker leases it, fans it out to the
-- subscribers in memory and writes each delivery once, with its outcome. A delivery row is written ahead
-- only when it cannot go at once (an earlier one of its plant pending for that subscriber, or the
-- subscriber saturated here) or must be retried; those rows are claimed as before. The body is stored once
-- per event: a delivery that succeeded at once reads it from here (its own body is null).

      CREATE TABLE outbox_events (
        event_id        text PRIMARY KEY,
        seq             bigint GENERATED ALWAYS AS IDENTITY,
        plant_id        bigint NOT NULL,
        tag             text,                 -- for the subscriptions' filters
        body            text NOT NULL,
        event_time      timestamptz NOT NULL,
        hops            integer NOT NULL DEFAULT 0,
        origin_event_id text,
        traceparent     text,
        leased_until    timestamptz,
        fanned_out_at   timestamptz,          -- every subscriber's delivery is written: done
        created_at      timestamptz NOT NULL DEFAULT now()
      ) WITH (fillfactor = 70); -- the lease update stays HOT
      CREATE INDEX outbox_events_due ON outbox_events (seq) WHERE fanned_out_at IS NULL;
      CREATE INDEX outbox_events_plant_order ON outbox_events (plant_id, seq) WHERE fanned_out_at IS NULL;
      CREATE INDEX outbox_events_age ON outbox_events USING brin (created_at);
      ALTER TABLE outbox_events SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
                                     autovacuum_vacuum_insert_scale_factor = 0.02);
      ALTER TABLE deliveries ALTER COLUMN body DROP NOT NULL;
