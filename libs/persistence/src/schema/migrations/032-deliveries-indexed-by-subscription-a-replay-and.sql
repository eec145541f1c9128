-- deliveries indexed by subscription: a replay and a subscription's list read only its own rows
-- A replay (recover, status=all) and the list of one subscription's deliveries (a portal link's, or an admin's
-- filter) walked every subscriber's rows in seq order and left out the others': a subscription with few rows
-- among many read the whole log to fill a page, and a portal link's replays scanned everyone's (issue #36).
-- Indexed by (subscription, seq) in both tables, each reads its own rows, in the same seq order. The append-only
-- log's index is made on each day's partition; on a large log this migration takes as long as building it.

      CREATE INDEX deliveries_by_subscription ON deliveries (subscription_id, seq);
      CREATE INDEX delivery_log_by_subscription ON delivery_log (subscription_id, seq);
