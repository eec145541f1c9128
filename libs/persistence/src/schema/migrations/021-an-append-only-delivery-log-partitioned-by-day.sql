-- an append-only delivery log, partitioned by day
-- A delivery that succeeded at its first attempt is written once and never changed: it goes to delivery_log,
-- partitioned by day of created_at, with three indexes (seq for the newest-first listing, id for a delivery's
-- page, a BRIN of created_at for the console's counts), all on the current day's partition only. Retention
-- drops a day's partition (DETACH ... CONCURRENTLY, then DROP) instead of deleting row by row. Deliveries that
-- wait, are retried or failed stay in `deliveries`, the mutable table, as before. Its id is the delivery's key
-- (deliveryKey: the same for every fan-out of an event to a subscriber), so a record can tell a delivery it
-- already holds without an index of its own; seq comes from deliveries' sequence, so the listing orders and
-- pages both tables as one (all_deliveries).
-- 
-- Existing rows stay where they are: the migration writes no row (it is instant on any size of table), and
-- the succeeded rows already in `deliveries` are listed from there and pruned by the batched DELETE as before,
-- the last time, within DELIVERY_RETENTION. Partitions are created for yesterday to a week ahead here, and
-- kept a week ahead by the worker's retention sweep (delivery_log_add_partitions).

      CREATE TABLE delivery_log (
        id              uuid NOT NULL,
        seq             bigint NOT NULL,
        subscription_id uuid NOT NULL,
        event_id        text NOT NULL,
        plant_id        bigint NOT NULL,
        event_time      timestamptz NOT NULL,
        hops            integer NOT NULL DEFAULT 0,
        origin_event_id text,
        traceparent     text,
        attempts        integer NOT NULL DEFAULT 1,
        attempt_log     jsonb NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now()
      ) PARTITION BY RANGE (created_at);
      DO $$ BEGIN
        EXECUTE format('ALTER TABLE delivery_log ALTER COLUMN seq SET DEFAULT nextval(%L::regclass)',
                       pg_get_serial_sequence('deliveries', 'seq'));
      END $$;
      CREATE INDEX delivery_log_seq ON delivery_log (seq);
      CREATE INDEX delivery_log_id ON delivery_log (id);
      CREATE INDEX delivery_log_age ON delivery_log USING brin (created_at);

      -- One partition per UTC day from first_day to last_day, those missing; each is created on its own and then
      -- attached, which takes a SHARE UPDATE EXCLUSIVE lock on delivery_log (CREATE TABLE ... PARTITION OF would
      -- take an ACCESS EXCLUSIVE one, blocking the writers). Callers are serialised. Returns how many it made.
      CREATE FUNCTION delivery_log_add_partitions(first_day date, last_day date) RETURNS integer
      LANGUAGE plpgsql AS $f$
      DECLARE
        d date;
        part text;
        lo timestamptz;
        hi timestamptz;
        made integer := 0;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('delivery_log partitions'));
        FOR d IN SELECT generate_series(first_day, last_day, interval '1 day')::date LOOP
          part := 'delivery_log_' || to_char(d, 'YYYYMMDD');
          CONTINUE WHEN to_regclass(part) IS NOT NULL;
          lo := d::timestamp AT TIME ZONE 'UTC';
          hi := (d + 1)::timestamp AT TIME ZONE 'UTC';
          EXECUTE format('CREATE TABLE %I (LIKE delivery_log INCLUDING DEFAULTS)', part);
          -- The attach then needs no scan to prove the rows fit (there are none; this says so for free).
          EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (created_at >= %L AND created_at < %L)',
                         part, part || '_day', lo, hi);
          EXECUTE format('ALTER TABLE delivery_log ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
          made := made + 1;
        END LOOP;
        RETURN made;
      END $f$;
      SELECT delivery_log_add_partitions((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 7);

      -- Every delivery, as the admin listing, a delivery's page and the console read them: the mutable rows and
      -- the appended ones (a delivery is in one of the two, never both).
      CREATE VIEW all_deliveries AS
        SELECT id, seq, subscription_id, event_id, plant_id, status, attempts, next_attempt_at, leased_until,
               created_at, updated_at, attempt_log, body, event_time, hops, origin_event_id, traceparent, event_type,
               backfill_id, false AS appended
        FROM deliveries
        UNION ALL
        -- Only live New Plant deliveries are sent from memory (an operational event's are rows from the start, and
        -- so are a backfill's: it writes pending rows).
        SELECT id, seq, subscription_id, event_id, plant_id, 'succeeded'::text, attempts, NULL::timestamptz,
               NULL::timestamptz, created_at, updated_at, attempt_log, NULL::text, event_time, hops, origin_event_id,
               traceparent, NULL::text, NULL::uuid, true
        FROM delivery_log;
