-- loop protection: hop count and origin on deliveries
-- A constant default: PostgreSQL adds these without rewriting the table.

      ALTER TABLE deliveries ADD COLUMN hops integer NOT NULL DEFAULT 0, ADD COLUMN origin_event_id text;
