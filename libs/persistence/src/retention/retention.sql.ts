import { statement } from '../sql/statement';

// Deletes a bounded batch of the oldest rows past their window, each statement short: SKIP LOCKED passes over
// rows that ingest or a delivery holds, so pruning never waits on them and they never wait on it.

export const PRUNE_PROCESSED_EVENTS = statement({
  name: 'prune-processed-events',
  runBy: 'RetentionRepository.prune',
  params: ['the cut-off: rows older than this go', 'how many rows at most (one short statement)'],
  text: `
DELETE FROM processed_events WHERE event_id IN (
  SELECT event_id FROM processed_events WHERE processed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
});

// Only finished deliveries: a pending one is work still to do, however old. Created and last changed before
// the cut-off: a delivery retried or recovered recently is kept with its attempt log.
export const PRUNE_DELIVERIES = statement({
  name: 'prune-deliveries',
  runBy: 'RetentionRepository.prune',
  params: ['the cut-off: rows older than this go', 'how many rows at most (one short statement)'],
  text: `
DELETE FROM deliveries WHERE id IN (
  SELECT id FROM deliveries
  WHERE created_at < $1 AND updated_at < $1 AND status <> 'pending'
  LIMIT $2 FOR UPDATE SKIP LOCKED)`,
});

// An event's outbox row is done once fanned out, but a delivery that succeeded at once reads its body from it:
// it goes with its deliveries (the caller gives it their window, plus a margin: they were written after it).
// One not yet fanned out is work still to do.
export const PRUNE_OUTBOX_EVENTS = statement({
  name: 'prune-outbox-events',
  runBy: 'RetentionRepository.prune',
  params: ['the cut-off: rows older than this go', 'how many rows at most (one short statement)'],
  text: `
DELETE FROM outbox_events WHERE event_id IN (
  SELECT event_id FROM outbox_events WHERE created_at < $1 AND fanned_out_at < $1
  LIMIT $2 FOR UPDATE SKIP LOCKED)`,
});

// A deleted subscription goes once its last delivery has aged out (its audit events stay: they name it by id).
// The log has no index by subscription: it is asked instead whether any of its rows is from before the deletion (an
// hour's margin for a record under way then), which only the partitions from before it can hold, and which the
// first row found answers. So a deleted subscription goes once those partitions are dropped.
export const PRUNE_SUBSCRIPTIONS = statement({
  name: 'prune-subscriptions',
  runBy: 'RetentionRepository.prune',
  params: ['the cut-off: rows older than this go', 'how many rows at most (one short statement)'],
  text: `
DELETE FROM subscriptions WHERE id IN (
  SELECT s.id FROM subscriptions s
  WHERE s.deleted_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id)
    AND NOT EXISTS (SELECT 1 FROM delivery_log l WHERE l.created_at < s.deleted_at + interval '1 hour')
  LIMIT $2 FOR UPDATE SKIP LOCKED)`,
});

// The append-only log of deliveries (delivery_log) is pruned a day at a time: a day's partition is detached and
// dropped, which costs the same whatever it holds and never waits on, nor holds up, the writers. These run as the
// schema's owner (DATABASE_MIGRATION_URL's role, when set), on the maintenance pool, one replica at a time.

/** Only one replica maintains the log at a time; the others skip it (a session lock, released after). */
export const LOCK_LOG_MAINTENANCE = statement({
  name: 'lock-log-maintenance',
  runBy: 'RetentionRepository.maintainLog',
  params: [],
  text: `SELECT pg_try_advisory_lock(hashtext('delivery_log maintenance')) AS locked`,
});

export const UNLOCK_LOG_MAINTENANCE = statement({
  name: 'unlock-log-maintenance',
  runBy: 'RetentionRepository.maintainLog',
  params: [],
  text: `SELECT pg_advisory_unlock(hashtext('delivery_log maintenance'))`,
});

/** Creates the days' partitions that are missing (see migration 21's delivery_log_add_partitions). */
export const ADD_LOG_PARTITIONS = statement({
  name: 'add-log-partitions',
  runBy: 'RetentionRepository.maintainLog',
  params: ['the first day (UTC)', 'the last day (UTC)'],
  text: `SELECT delivery_log_add_partitions($1::date, $2::date) AS made`,
});

/**
 * The log's day partitions, and what a sweep cut short left of one: still detaching (a detach cancelled in its second
 * phase), or detached but not dropped.
 */
export const LIST_LOG_PARTITIONS = statement({
  name: 'list-log-partitions',
  runBy: 'RetentionRepository.maintainLog',
  params: [],
  text: `
SELECT substring(c.relname FROM '^delivery_log_([0-9]{8})$') AS day,
       CASE WHEN i.inhrelid IS NULL THEN 'detached' WHEN i.inhdetachpending THEN 'detaching' ELSE 'attached' END
         AS state,
       greatest(c.reltuples, 0)::bigint AS estimated_rows
FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = 'delivery_log'::regclass
WHERE c.relkind = 'r' AND c.relname ~ '^delivery_log_[0-9]{8}$' AND pg_table_is_visible(c.oid)
ORDER BY c.relname`,
});

// The three below name a partition, which no parameter can: DAY is replaced by its YYYYMMDD (digits only, checked)
// when sent. DETACH ... CONCURRENTLY takes a SHARE UPDATE EXCLUSIVE lock on delivery_log, which writers and readers
// do not conflict with, and waits for the statements that may still read the partition; it cannot run inside a
// transaction (nor a function), hence statements of their own.
export const DETACH_LOG_PARTITION = statement({
  name: 'detach-log-partition',
  runBy: 'RetentionRepository.maintainLog',
  params: [],
  text: `ALTER TABLE delivery_log DETACH PARTITION delivery_log_DAY CONCURRENTLY`,
});

/** A detach cancelled in its second phase (a timeout, say) is finished by the next sweep. */
export const FINALIZE_LOG_PARTITION = statement({
  name: 'finalize-log-partition',
  runBy: 'RetentionRepository.maintainLog',
  params: [],
  text: `ALTER TABLE delivery_log DETACH PARTITION delivery_log_DAY FINALIZE`,
});

/** Detached, the table is no longer the log's: dropping it locks nothing anyone else uses. */
export const DROP_LOG_PARTITION = statement({
  name: 'drop-log-partition',
  runBy: 'RetentionRepository.maintainLog',
  params: [],
  text: `DROP TABLE IF EXISTS delivery_log_DAY`,
});
