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
  LIMIT $2 FOR UPDATE SKIP LOCKED);
