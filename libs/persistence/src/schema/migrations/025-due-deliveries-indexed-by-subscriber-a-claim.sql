-- due deliveries indexed by subscriber: a claim never reads another subscriber's backlog
-- The claim visits the subscribers with pending rows and takes the oldest due rows of each it may send to;
-- indexed by due time alone, it read the oldest due rows of every subscriber, those of a disabled one too,
-- before leaving them out, and a disabled subscriber's backlog held everyone else's retries back. The same
-- name, so the benchmarks' index rebuilds and the docs keep working.

      DROP INDEX deliveries_due;
      CREATE INDEX deliveries_due ON deliveries (subscription_id, next_attempt_at) WHERE status = 'pending';
