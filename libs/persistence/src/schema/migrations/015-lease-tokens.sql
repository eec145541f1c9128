-- lease tokens
-- Each claim (of delivery rows, of events to fan out) writes a token of its own beside the lease's end, so
-- that whatever is done under a lease (an outcome recorded, a lease renewed or handed back) is done only
-- while that claim still holds it: a worker whose lease lapsed while a delivery waited cannot overwrite the
-- outcome of the claim that holds it now. Nullable, no default: no table is rewritten.

      ALTER TABLE deliveries ADD COLUMN lease_token uuid;
      ALTER TABLE outbox_events ADD COLUMN lease_token uuid;
