-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every retention statement the repositories send, exactly as sent, with what each parameter means.

-- prune-processed-events
-- Sent by RetentionRepository.prune.
-- $1: the cut-off: rows older than this go
-- $2: how many rows at most (one short statement)
DELETE FROM processed_events WHERE event_id IN (
  SELECT event_id FROM processed_events WHERE processed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED);

-- prune-deliveries
-- Sent by RetentionRepository.prune.
-- $1: the cut-off: rows older than this go
-- $2: how many rows at most (one short statement)
DELETE FROM deliveries WHERE id IN (
  SELECT id FROM deliveries
  WHERE created_at < $1 AND updated_at < $1 AND status <> 'pending'
  LIMIT $2 FOR UPDATE SKIP LOCKED);

-- prune-outbox-events
-- Sent by RetentionRepository.prune.
-- $1: the cut-off: rows older than this go
-- $2: how many rows at most (one short statement)
DELETE FROM outbox_events WHERE event_id IN (
  SELECT event_id FROM outbox_events WHERE created_at < $1 AND fanned_out_at < $1
  LIMIT $2 FOR UPDATE SKIP LOCKED);

-- prune-subscriptions
-- Sent by RetentionRepository.prune.
-- $1: the cut-off: rows older than this go
-- $2: how many rows at most (one short statement)
DELETE FROM subscriptions WHERE id IN (
  SELECT s.id FROM subscriptions s
  WHERE s.deleted_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM delivery_log l WHERE l.created_at < s.deleted_at + interval '1 hour')
  LIMIT $2 FOR UPDATE SKIP LOCKED);

-- lock-log-maintenance
-- Sent by RetentionRepository.maintainLog.
SELECT pg_try_advisory_lock(hashtext('delivery_log maintenance')) AS locked;

-- add-log-partitions
-- Sent by RetentionRepository.maintainLog.
-- $1: the first day (UTC)
-- $2: the last day (UTC)
SELECT delivery_log_add_partitions($1::date, $2::date) AS made;

-- list-log-partitions
-- Sent by RetentionRepository.maintainLog.
SELECT substring(c.relname FROM '^delivery_log_([0-9]{8})$') AS day,
       CASE WHEN i.inhrelid IS NULL THEN 'detached' WHEN i.inhdetachpending THEN 'detaching' ELSE 'attached' END
         AS state,
       greatest(c.reltuples, 0)::bigint AS estimated_rows
FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = 'delivery_log'::regclass
WHERE c.relkind = 'r' AND c.relname ~ '^delivery_log_[0-9]{8}$' AND pg_table_is_visible(c.oid)
ORDER BY c.relname;

-- detach-log-partition
-- Sent by RetentionRepository.maintainLog.
ALTER TABLE delivery_log DETACH PARTITION delivery_log_DAY CONCURRENTLY;

-- finalize-log-partition
-- Sent by RetentionRepository.maintainLog.
ALTER TABLE delivery_log DETACH PARTITION delivery_log_DAY FINALIZE;

-- drop-log-partition
-- Sent by RetentionRepository.maintainLog.
DROP TABLE IF EXISTS delivery_log_DAY;

-- unlock-log-maintenance
-- Sent by RetentionRepository.maintainLog.
SELECT pg_advisory_unlock(hashtext('delivery_log maintenance'));
