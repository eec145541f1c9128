-- backfills: the current state of every plant a subscriber would receive
-- A backfill is asked for through the API and run by one worker at a time under a lease: each tick it writes
-- the next plants (by id, from the cursor) as pending delivery rows of the subscriber, so they go through the
-- same per-plant order as live ones, and moves the cursor in the same transaction (a crash resumes there).
-- The delivery rows name their backfill; only pending ones are indexed (a live row has none: no index entry).

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
