-- an event id remembers the plant it came with
-- The digest of the plant (plantDigest): an event id that comes again with another plant is an idempotency
-- key reused on another gateway replica, which that replica could not see. It is reported, not stored.

      ALTER TABLE processed_events ADD COLUMN digest text;
