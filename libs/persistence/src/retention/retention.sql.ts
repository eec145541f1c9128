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
export const PRUNE_SUBSCRIPTIONS = statement({
  name: 'prune-subscriptions',
  runBy: 'RetentionRepository.prune',
  params: ['the cut-off: rows older than this go', 'how many rows at most (one short statement)'],
  text: `
DELETE FROM subscriptions WHERE id IN (
  SELECT s.id FROM subscriptions s
  WHERE s.deleted_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = s.id)
  LIMIT $2 FOR UPDATE SKIP LOCKED)`,
});
