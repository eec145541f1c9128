-- Retention: old rows pruned in short statements, and the delivery log kept as one partition per day (UTC).

-- @name prune-processed-events
-- Deletes a bounded batch of the oldest rows past their window, each statement short: SKIP LOCKED passes over rows
-- that ingest or a delivery holds, so pruning never waits on them and they never wait on it. Sent by
-- RetentionRepository.prune.
-- :before the cut-off: rows older than this go
-- :limit how many rows at most (one short statement)
DELETE FROM processed_events WHERE event_id IN (
  SELECT event_id FROM processed_events WHERE processed_at < :before LIMIT :limit FOR UPDATE SKIP LOCKED);

-- @name prune-deliveries
-- Only finished deliveries: a pending one is work still to do, however old. Created and last changed before the
-- cut-off: a delivery retried or recovered recently is kept with its attempt log. Sent by
-- RetentionRepository.prune.
-- :before the cut-off: rows older than this go
-- :limit how many rows at most (one short statement)
DELETE FROM deliveries WHERE id IN (
  SELECT id FROM deliveries
  WHERE created_at < :before AND updated_at < :before AND status <> 'pending'
  LIMIT :limit FOR UPDATE SKIP LOCKED);

-- @name prune-outbox-events
-- An event's outbox row is done once fanned out, but a delivery that succeeded at once reads its body from it: it
-- goes with its deliveries (the caller gives it their window, plus a margin: they were written after it). One not
-- yet fanned out is work still to do. Sent by RetentionRepository.prune.
-- :before the cut-off: rows older than this go
-- :limit how many rows at most (one short statement)
DELETE FROM outbox_events WHERE event_id IN (
  SELECT event_id FROM outbox_events WHERE created_at < :before AND fanned_out_at < :before
  LIMIT :limit FOR UPDATE SKIP LOCKED);

-- @name prune-subscriptions
-- A deleted subscription goes once its last delivery has aged out (its audit events stay: they name it by id). The
-- log has no index by subscription: it is asked instead whether any of its rows is from before the deletion (an
-- hour's margin for a record under way then), which only the partitions from before it can hold, and which the
-- first row found answers. So a deleted subscription goes once those partitions are dropped. Sent by
-- RetentionRepository.prune.
-- :before the cut-off: rows older than this go
-- :limit how many rows at most (one short statement)
DELETE FROM subscriptions WHERE id IN (
  SELECT s.id FROM subscriptions s
  WHERE s.deleted_at < :before AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM delivery_log l WHERE l.created_at < s.deleted_at + interval '1 hour')
  LIMIT :limit FOR UPDATE SKIP LOCKED);

-- @name lock-log-maintenance
-- Only one replica maintains the log at a time; the others skip it (a session lock, released after). Sent by
-- RetentionRepository.maintainLog.
SELECT pg_try_advisory_lock(hashtext('delivery_log maintenance')) AS locked;

-- @name unlock-log-maintenance
-- Sent by RetentionRepository.maintainLog.
SELECT pg_advisory_unlock(hashtext('delivery_log maintenance'));

-- @name add-log-partitions
-- Creates the days' partitions that are missing (see migration 21's delivery_log_add_partitions). Sent by
-- RetentionRepository.maintainLog.
-- :firstDay the first day (UTC)
-- :lastDay the last day (UTC)
SELECT delivery_log_add_partitions(:firstDay::date, :lastDay::date) AS made;

-- @name list-log-partitions
-- The log's day partitions, and what a sweep cut short left of one: still detaching (a detach cancelled in its
-- second phase), or detached but not dropped. Sent by RetentionRepository.maintainLog.
SELECT substring(c.relname FROM '^delivery_log_([0-9]{8})$') AS day,
       CASE WHEN i.inhrelid IS NULL THEN 'detached' WHEN i.inhdetachpending THEN 'detaching' ELSE 'attached' END
         AS state,
       greatest(c.reltuples, 0)::bigint AS estimated_rows
FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = 'delivery_log'::regclass
WHERE c.relkind = 'r' AND c.relname ~ '^delivery_log_[0-9]{8}$' AND pg_table_is_visible(c.oid)
ORDER BY c.relname;

-- @name detach-log-partition
-- The three below name a partition, which no parameter can: DAY is replaced by its YYYYMMDD (digits only, checked)
-- when sent. DETACH ... CONCURRENTLY takes a SHARE UPDATE EXCLUSIVE lock on delivery_log, which writers and readers
-- do not conflict with, and waits for the statements that may still read the partition; it cannot run inside a
-- transaction (nor a function), hence statements of their own. Sent by RetentionRepository.maintainLog.
ALTER TABLE delivery_log DETACH PARTITION delivery_log_DAY CONCURRENTLY;

-- @name finalize-log-partition
-- A detach cancelled in its second phase (a timeout, say) is finished by the next sweep. Sent by
-- RetentionRepository.maintainLog.
ALTER TABLE delivery_log DETACH PARTITION delivery_log_DAY FINALIZE;

-- @name drop-log-partition
-- Detached, the table is no longer the log's: dropping it locks nothing anyone else uses. Sent by
-- RetentionRepository.maintainLog.
DROP TABLE IF EXISTS delivery_log_DAY;
