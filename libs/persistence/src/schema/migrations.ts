// Schema migrations, applied in order, each once, inside one transaction under an advisory lock so that several
// workers (and the setup Job, apps/worker/src/setup) starting together do not race; the gateway only waits for
// the schema version. Append; never edit a shipped migration.
export const migrations: { id: number; name: string; sql: string }[] = [
  {
    id: 1,
    name: 'plants and processed events',
    sql: `
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
    `,
  },
  {
    id: 2,
    name: 'subscriptions, deliveries and attempts',
    sql: `
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
    `,
  },
  {
    id: 3,
    name: 'attempts stored with their delivery',
    // Recording an attempt was an UPDATE of the delivery plus an INSERT with two index entries and a
    // foreign-key check (a row lock on the delivery it had just updated): measured, the biggest share of the
    // database's time per delivery. Now it is the UPDATE alone, appending to the delivery's own log.
    sql: `
      ALTER TABLE deliveries ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';
      UPDATE deliveries d SET attempt_log = a.log
      FROM (
        SELECT delivery_id, jsonb_agg(jsonb_build_object(
                 'attemptedAt', attempted_at, 'status', status, 'latencyMs', latency_ms,
                 'error', error, 'responseBody', response_body) ORDER BY id) AS log
        FROM delivery_attempts GROUP BY delivery_id
      ) a
      WHERE a.delivery_id = d.id;
      DROP TABLE delivery_attempts;
      -- A queue table: most rows turn from pending to done within a second, and claims walk the pending index
      -- past their dead versions until a vacuum removes them. Vacuum it after 2 % changed, not PostgreSQL's 20 %.
      ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
                                  autovacuum_vacuum_insert_scale_factor = 0.02);
    `,
  },
  {
    id: 4,
    name: 'loop protection: hop count and origin on deliveries',
    // A constant default: PostgreSQL adds these without rewriting the table.
    sql: `
      ALTER TABLE deliveries ADD COLUMN hops integer NOT NULL DEFAULT 0, ADD COLUMN origin_event_id text;
    `,
  },
  {
    id: 5,
    name: 'retention: find old rows without slowing the writes that make them',
    // BRIN indexes: a few pages that summarise block ranges, nearly free to maintain on the ingest path (a
    // B-tree would add an index write per event). processed_events is append-only, so its time follows the
    // physical order exactly; deliveries are mostly updated in place (HOT, fillfactor 70), so created_at
    // follows it closely enough to find the oldest blocks.
    sql: `
      CREATE INDEX processed_events_age ON processed_events USING brin (processed_at);
      CREATE INDEX deliveries_age ON deliveries USING brin (created_at);
    `,
  },
  {
    id: 6,
    name: 'credentials: signature schemes, public keys, the audit trail',
    // Secrets and tokens are sealed in place by the worker's setup (secrets/seal-credentials.ts), which needs
    // SECRETS_KEY and so cannot be SQL; it is idempotent and also re-seals under a rotated key.
    sql: `
      ALTER TABLE subscriptions
        ADD COLUMN signature text NOT NULL DEFAULT 'symmetric' CHECK (signature IN ('symmetric', 'asymmetric')),
        ADD COLUMN public_key text,
        ADD COLUMN previous_public_key text;

      CREATE TABLE audit_events (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at              timestamptz NOT NULL DEFAULT now(),
        actor           text NOT NULL,   -- the admin token's name or fingerprint, never the token
        action          text NOT NULL,
        subscription_id uuid,            -- kept after the subscription is deleted: that is what it is for
        delivery_id     uuid,
        details         jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_events_by_subscription ON audit_events (subscription_id, id);
    `,
  },
  {
    id: 7,
    name: 'a deleted subscription keeps its delivery history',
    // Deleting a subscription used to cascade to its deliveries, and an operator investigating a complaint lost
    // the evidence. Now it is marked deleted (credentials dropped, pending deliveries closed as failed) and its
    // deliveries age out with DELIVERY_RETENTION; the row goes once none is left (retention/).
    sql: `
      ALTER TABLE subscriptions ADD COLUMN deleted_at timestamptz;
    `,
  },
  {
    id: 8,
    name: 'a plant keeps the properties it came with beyond id, name and tag',
    // The published NewPlant allows more properties than id, name and tag; they used to be accepted and then
    // dropped. Now they are stored, returned by the read API and delivered. A constant default: no rewrite.
    sql: `
      ALTER TABLE plants ADD COLUMN extra jsonb NOT NULL DEFAULT '{}';
    `,
  },
  {
    id: 9,
    name: 'a delivery carries on the trace of the event that caused it',
    // The W3C traceparent of the worker's span that stored the event: every attempt is a child span of it and
    // sends the receiver a traceparent of its own, so one trace goes from sender to subscriber. No default.
    sql: `
      ALTER TABLE deliveries ADD COLUMN traceparent text;
    `,
  },
  {
    id: 10,
    name: 'an event id remembers the plant it came with',
    // The digest of the plant (plantDigest): an event id that comes again with another plant is an idempotency
    // key reused on another gateway replica, which that replica could not see. It is reported, not stored.
    sql: `
      ALTER TABLE processed_events ADD COLUMN digest text;
    `,
  },
  {
    id: 11,
    name: 'dead letters an operator can list, inspect, redrive and discard',
    // Every record of plant.created.dlq, copied by the worker's dead-letter archive (one row per DLQ record:
    // the unique key makes the copy idempotent across restarts and replicas), with what an operator did to it.
    // The original key, value and headers are kept as bytes: poison is whatever it was.
    sql: `
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
    `,
  },
  {
    id: 12,
    name: 'a subscription may receive only some plants',
    // SubscriptionFilter ({tags?, plantIds?: {min?, max?}}), applied by the ingest statement's fan-out.
    sql: `
      ALTER TABLE subscriptions ADD COLUMN filter jsonb NOT NULL DEFAULT '{}';
    `,
  },
  {
    id: 13,
    name: 'one outbox row per event, fanned out in memory',
    // Every delivery used to be an outbox row written at ingest (five index entries) and rewritten with its
    // outcome (a non-HOT update: status and next_attempt_at sit in the partial indexes): the biggest cost per
    // delivery, measured. Now ingest writes one row per changed event, a worker leases it, fans it out to the
    // subscribers in memory and writes each delivery once, with its outcome. A delivery row is written ahead
    // only when it cannot go at once (an earlier one of its plant pending for that subscriber, or the
    // subscriber saturated here) or must be retried; those rows are claimed as before. The body is stored once
    // per event: a delivery that succeeded at once reads it from here (its own body is null).
    sql: `
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
    `,
  },
  {
    id: 14,
    name: 'deliveries no longer lock their subscription',
    // The foreign key made every delivery written take a KEY SHARE lock on its subscription's row. Deliveries are
    // now written by several statements at once (the fan-out's records, ingest and the fan-out statement writing
    // rows that wait): on the same few subscription rows, concurrent KEY SHARE locks become MultiXacts. The key
    // guarded nothing left: a subscription is deleted softly (migration 7) and its row removed only once no
    // delivery refers to it (retention), and the statements that write deliveries check it exists.
    sql: `
      ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_subscription_id_fkey;
    `,
  },
  {
    id: 15,
    name: 'lease tokens',
    // Each claim (of delivery rows, of events to fan out) writes a token of its own beside the lease's end, so
    // that whatever is done under a lease (an outcome recorded, a lease renewed or handed back) is done only
    // while that claim still holds it: a worker whose lease lapsed while a delivery waited cannot overwrite the
    // outcome of the claim that holds it now. Nullable, no default: no table is rewritten.
    sql: `
      ALTER TABLE deliveries ADD COLUMN lease_token uuid;
      ALTER TABLE outbox_events ADD COLUMN lease_token uuid;
    `,
  },
  {
    id: 16,
    name: 'custom headers sent with each delivery',
    // A subscription's own headers (name -> value), sent with every delivery: `headers` in the clear, shown to
    // operators; `secret_headers` sealed like the token (secrets/, bound to the subscription and the header's
    // name), never shown again. Constant defaults: no rewrite.
    sql: `
      ALTER TABLE subscriptions
        ADD COLUMN headers jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN secret_headers jsonb NOT NULL DEFAULT '{}';
    `,
  },
  {
    id: 17,
    name: 'portal links',
    // A subscriber's own credential, scoped to one subscription: only the token's SHA-256 is kept (a token is 32
    // random bytes, so a plain digest is enough: nothing to guess), never the token. Expiring and revocable; the
    // links of a subscription go with its row (retention removes the row once its deliveries are gone).
    sql: `
      CREATE TABLE portal_links (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        token_digest    bytea NOT NULL UNIQUE,
        description     text,
        created_by      text NOT NULL,        -- the admin token's name, never the token
        created_at      timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz NOT NULL,
        revoked_at      timestamptz,
        revoked_by      text,
        last_used_at    timestamptz
      );
      CREATE INDEX portal_links_by_subscription ON portal_links (subscription_id, created_at);
    `,
  },
  {
    id: 18,
    name: 'flow control and circuit breaker per subscriber',
    // Per subscriber: its own limits (split between the live worker replicas, who say they are alive in
    // worker_replicas), a pause it asked for with Retry-After, and its circuit breaker (consecutive failures, since
    // when it fails, the state, when the next probe may go). Every column is nullable or has a constant default:
    // no table is rewritten. Each change of state is written with an audit event by the statement that makes it
    // (libs/persistence/src/subscriber-health).
    sql: `
      ALTER TABLE subscriptions
        ADD COLUMN max_deliveries_per_second double precision,
        ADD COLUMN max_concurrency integer,
        ADD COLUMN paused_until timestamptz,
        ADD COLUMN circuit_state text NOT NULL DEFAULT 'closed',
        ADD COLUMN circuit_since timestamptz,
        ADD COLUMN circuit_last_error text,
        ADD COLUMN circuit_probe_at timestamptz,
        ADD COLUMN circuit_probes integer NOT NULL DEFAULT 0,
        ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
        ADD COLUMN failing_since timestamptz;
      CREATE TABLE worker_replicas (
        id      uuid PRIMARY KEY,
        seen_at timestamptz NOT NULL
      );
    `,
  },
  {
    id: 19,
    name: "operational webhooks: subscriptions to Plant Store's own events",
    // A subscription is of one kind for good: `plants` (New Plant webhooks, as before) or `operational` (Plant
    // Store's own events: subscription.disabled, delivery.exhausted, ...; `event_types` null means all). An
    // operational event is written as one pending delivery per operational subscriber by the statement that makes
    // it (the same transaction), and sent, retried and listed like any delivery: it has no plant, so plant_id is
    // nullable, and event_type says what it is (null: a New Plant). Constant defaults: no table is rewritten.
    sql: `
      ALTER TABLE subscriptions
        ADD COLUMN kind text NOT NULL DEFAULT 'plants' CHECK (kind IN ('plants', 'operational')),
        ADD COLUMN event_types text[];
      ALTER TABLE deliveries ALTER COLUMN plant_id DROP NOT NULL, ADD COLUMN event_type text;
    `,
  },
  {
    id: 20,
    name: 'backfills: the current state of every plant a subscriber would receive',
    // A backfill is asked for through the API and run by one worker at a time under a lease: each tick it writes
    // the next plants (by id, from the cursor) as pending delivery rows of the subscriber, so they go through the
    // same per-plant order as live ones, and moves the cursor in the same transaction (a crash resumes there).
    // The delivery rows name their backfill; only pending ones are indexed (a live row has none: no index entry).
    sql: `
      CREATE TABLE backfills (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL,
        since           timestamptz,          -- only plants changed since; null: every plant
        rate_per_second integer NOT NULL,
        state           text NOT NULL DEFAULT 'running'
                        CHECK (state IN ('running', 'cancelling', 'completed', 'cancelled')),
        total           integer NOT NULL,     -- plants it would send when asked for
        after_plant_id  bigint,               -- the last plant id looked at; null: none yet
        exhausted       boolean NOT NULL DEFAULT false, -- every plant up to the last one queued
        queued          integer NOT NULL DEFAULT 0,     -- delivery rows written
        pending         integer NOT NULL DEFAULT 0,     -- of those, not yet answered for good (last counted)
        superseded      integer NOT NULL DEFAULT 0,     -- dropped unsent: a newer live event delivers the plant
        dropped         integer NOT NULL DEFAULT 0,     -- dropped unsent when cancelled
        created_by      text NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        finished_at     timestamptz,
        leased_until    timestamptz,
        lease_token     uuid
      );
      CREATE INDEX backfills_by_subscription ON backfills (subscription_id, created_at);
      CREATE INDEX backfills_active ON backfills (created_at) WHERE state IN ('running', 'cancelling');
      CREATE UNIQUE INDEX backfills_one_active ON backfills (subscription_id) WHERE state IN ('running', 'cancelling');
      ALTER TABLE deliveries ADD COLUMN backfill_id uuid;
      CREATE INDEX deliveries_backfill_pending ON deliveries (backfill_id)
        WHERE backfill_id IS NOT NULL AND status = 'pending';
    `,
  },
  {
    id: 21,
    name: 'an append-only delivery log, partitioned by day',
    // A delivery that succeeded at its first attempt is written once and never changed: it goes to delivery_log,
    // partitioned by day of created_at, with three indexes (seq for the newest-first listing, id for a delivery's
    // page, a BRIN of created_at for the console's counts), all on the current day's partition only. Retention
    // drops a day's partition (DETACH ... CONCURRENTLY, then DROP) instead of deleting row by row. Deliveries that
    // wait, are retried or failed stay in `deliveries`, the mutable table, as before. Its id is the delivery's key
    // (deliveryKey: the same for every fan-out of an event to a subscriber), so a record can tell a delivery it
    // already holds without an index of its own; seq comes from deliveries' sequence, so the listing orders and
    // pages both tables as one (all_deliveries).
    //
    // Existing rows stay where they are: the migration writes no row (it is instant on any size of table), and
    // the succeeded rows already in `deliveries` are listed from there and pruned by the batched DELETE as before,
    // the last time, within DELIVERY_RETENTION. Partitions are created for yesterday to a week ahead here, and
    // kept a week ahead by the worker's retention sweep (delivery_log_add_partitions).
    sql: `
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
    `,
  },
  {
    id: 22,
    name: 'replay of every delivery since a time: what a replayed delivery was',
    // A replay of "everything since a time" sends deliveries that succeeded, or failed for good, once more: each is
    // a pending row of deliveries again (one from delivery_log is moved back here, with its id, seq and attempts),
    // marked with the status it had. The mark lets the claim tell a replay from live traffic: a replay is sent only
    // while no newer version of its plant has gone to the subscriber meanwhile (replayCurrent), else it goes back
    // to that status unsent ('succeeded' or 'failed'; the statements that write it are the only ones). Null for every
    // other row, so nullable with no default and no CHECK: no table is rewritten, nor scanned under its lock.
    sql: `
      ALTER TABLE deliveries ADD COLUMN replayed_from text;
    `,
  },
  {
    id: 23,
    name: 'a version of the subscriptions, bumped and notified when what a worker sends with changes',
    // Each worker keeps the enabled subscriptions in memory and fans a consumed batch out from them. Every change
    // to what it holds of a subscription (an admin's, a 410's, the breaker disabling one, a re-seal, retention
    // removing one) bumps this version and notifies 'plant_store_subscriptions' in the same transaction; a worker
    // reloads on the notification, and polls the version too, so a missed notification costs one poll. Only
    // those columns: the breaker's own (consecutive failures, circuit, pause) change with every batch of outcomes
    // and reach the workers by their heartbeat, so they must not make every copy out of date. Row-level: a
    // statement that changes no row (the record statements' 410 clause) bumps nothing.
    sql: `
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
    `,
  },
  {
    id: 24,
    name: 'whether the operator disabled a subscription: a portal link cannot enable it again',
    // A portal link may disable and enable its own subscription, but what the operator disabled stays disabled
    // until an admin enables it: the update statement refuses a portal link's enable while this is true. Set by an
    // admin's disable, cleared by any enable; the worker's (410, failing too long) and a portal link's leave it
    // false. A constant default: no table is rewritten. The subscriptions an admin disabled before are known by the
    // reason that disable wrote; a portal link's disable wrote the same reason until now, so those count as the
    // operator's too (the safe side: an admin enables them). An older gateway still running meanwhile leaves the
    // column as it is.
    sql: `
      ALTER TABLE subscriptions ADD COLUMN disabled_by_operator boolean NOT NULL DEFAULT false;
      UPDATE subscriptions SET disabled_by_operator = true
       WHERE NOT enabled AND deleted_at IS NULL AND disabled_reason = 'disabled by an admin';
    `,
  },
  {
    id: 25,
    name: "due deliveries indexed by subscriber: a claim never reads another subscriber's backlog",
    // The claim visits the subscribers with pending rows and takes the oldest due rows of each it may send to;
    // indexed by due time alone, it read the oldest due rows of every subscriber, those of a disabled one too,
    // before leaving them out, and a disabled subscriber's backlog held everyone else's retries back. The same
    // name, so the benchmarks' index rebuilds and the docs keep working.
    sql: `
      DROP INDEX deliveries_due;
      CREATE INDEX deliveries_due ON deliveries (subscription_id, next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    id: 26,
    name: "a delivery's attempt log keeps its last 20 attempts",
    // Each replay or retry added an entry (~1 KiB with the reply) to a log rewritten whole on every attempt: a
    // portal link replaying in a loop grew one row without bound. `attempts` still counts every attempt; the log
    // keeps the newest 20 (the whole retry schedule, and then some). The one place the bound is written: every
    // statement that adds to a log calls this.
    sql: `
      CREATE FUNCTION append_attempts(log jsonb, more jsonb) RETURNS jsonb
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN jsonb_array_length(log || more) <= 20 THEN log || more
               ELSE (SELECT jsonb_agg(e ORDER BY i) FROM jsonb_array_elements(log || more) WITH ORDINALITY AS x(e, i)
                     WHERE i > jsonb_array_length(log || more) - 20) END
      $fn$;
    `,
  },
  {
    id: 27,
    name: "a subscription's recent actions of one kind, indexed: the replay budget reads only those",
    // The portal replay budget counts a subscription's replays of the last day. By (subscription_id, id) it read
    // every audit event of the subscription (each retry, change and test adds one) for each call it checked.
    sql: `CREATE INDEX audit_events_recent_actions ON audit_events (subscription_id, action, at);`,
  },
  {
    id: 28,
    name: 'one replay at a time per subscription',
    // A replay call holds its subscription's row while it runs; a second one meanwhile, from any gateway, is
    // refused. `until` bounds the hold, so a gateway that dies mid-call frees it by itself. A table of its own:
    // a change to a subscription's row would make every worker reload the subscriptions.
    sql: `
      CREATE TABLE subscription_replays (
        subscription_id uuid PRIMARY KEY REFERENCES subscriptions (id) ON DELETE CASCADE,
        holder uuid NOT NULL,
        until timestamptz NOT NULL
      );
    `,
  },
  {
    id: 29,
    name: 'operational notices coalesced per subscription and window',
    // One delivery.exhausted per failing subscription per window (see the `exhaustedNotices` fragment): what was
    // held back meanwhile is counted here and told with the next one.
    sql: `
      CREATE TABLE operational_notices (
        subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        type text NOT NULL,
        window_ends timestamptz NOT NULL,
        held integer NOT NULL,
        reported integer NOT NULL,
        PRIMARY KEY (subscription_id, type)
      );
    `,
  },
  {
    id: 30,
    name: 'which subscription each version of the subscriptions changed: a worker reloads that one alone',
    // Every change bumped the one version and every worker reloaded every subscription (opening each one's
    // credentials) for it: a portal link changing its own subscription in a loop cost everyone (issue #36). The
    // version now also names the subscription it changed, so a worker one or a few versions behind reads those
    // subscriptions alone. Versions have no gaps (each is one UPDATE of one row, rolled back with its change), so
    // a worker knows whether the log still holds every change since its copy: the last 1,000 are kept.
    sql: `
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
    `,
  },
];
