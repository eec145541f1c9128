-- retention: find old rows without slowing the writes that make them
-- BRIN indexes: a few pages that summarise block ranges, nearly free to maintain on the ingest path (a
-- B-tree would add an index write per event). processed_events is append-only, so its time follows the
-- physical order exactly; deliveries are mostly updated in place (HOT, fillfactor 70), so created_at
-- follows it closely enough to find the oldest blocks.

      CREATE INDEX processed_events_age ON processed_events USING brin (processed_at);
      CREATE INDEX deliveries_age ON deliveries USING brin (created_at);
