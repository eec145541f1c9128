import {
  appendAttempts,
  attemptCount,
  attemptEntry,
  attemptLog,
  deliveryKey,
  deliveryRecorded,
  inLogSince,
  disableGone,
  FANNED_OUT_SEND_COLUMNS,
  matchesFilter,
  noEarlierEventPending,
  noEarlierPending,
  receivesPlants,
  writeWaiting,
} from '../sql/fragments/outbox';
import {
  deliveryExhaustedEvents,
  exhaustedNotices,
  operationalEvents,
  subscriptionDisabledEvents,
} from '../sql/fragments/operational';
import { statement } from '../sql/statement';

/**
 * Leases outbox events to this dispatcher and fans them out to their subscribers, for it to send from memory:
 * no delivery row is written for a delivery that can go at once (its row is written with its outcome, see
 * RECORD_FANNED_OUT). A delivery that must wait, behind an earlier pending one of its plant for that subscriber
 * or for a subscriber saturated here, is written as a pending row now, for the claims (CLAIM) to send in order.
 * Events come oldest first, never behind an earlier event of their plant still being fanned out, and as many
 * as fit the room given if each goes to every subscriber (one at least). Never more deliveries than the room
 * are handed back: an event with more subscribers than that has the rest written as rows, so memory stays
 * bounded however many subscribers there are. A subscriber whose delivery of the event is already written (a
 * crashed worker's lease ran out after it recorded some) is left out. An event with nothing to send from
 * memory is done at once.
 */
export const FAN_OUT = statement({
  name: 'fan-out',
  runBy: 'OutboxRepository.fanOut',
  params: [
    'how many deliveries to hand back at most (the room)',
    'subscriptions saturated here (their deliveries are written to wait)',
    'the lease, ms',
    "the lease's token",
  ],
  text: `
WITH subscribers AS MATERIALIZED (
  SELECT s.id, s.filter FROM subscriptions s WHERE ${receivesPlants('s')}
), events_wanted AS (
  -- As many events as fit the room if every subscriber receives each (with filters, fewer deliveries: the
  -- dispatcher fans out again).
  SELECT greatest(1, $1 / greatest(1, (SELECT count(*) FROM subscribers)))::int AS n
), candidates AS MATERIALIZED (
  SELECT e.event_id FROM outbox_events e
  WHERE e.fanned_out_at IS NULL AND (e.leased_until IS NULL OR e.leased_until < now())
  ORDER BY e.seq
  LIMIT (SELECT 8 * n FROM events_wanted)
), due AS MATERIALIZED (
  -- Re-checked on the locked row's newest version: a replica may have leased or finished it since this
  -- statement's snapshot (as in CLAIM).
  SELECT e.* FROM candidates c JOIN outbox_events e ON e.event_id = c.event_id
  WHERE e.fanned_out_at IS NULL AND (e.leased_until IS NULL OR e.leased_until < now())
    AND ${noEarlierEventPending('e.plant_id', 'e.seq')}
  LIMIT (SELECT n FROM events_wanted)
  FOR UPDATE OF e SKIP LOCKED
), fanout AS MATERIALIZED (
  SELECT e.event_id, e.seq, s.id AS subscription_id,
         NOT (s.id = ANY($2::uuid[])) AND ${noEarlierPending('s.id', 'e.plant_id')} AS sendable
  FROM due e JOIN subscribers s ON ${matchesFilter('s', 'e.plant_id', 'e.tag')}
  WHERE NOT ${deliveryRecorded('s.id', 'e.event_id', 'e.created_at')}
), ranked AS MATERIALIZED (
  -- The ones handed back to send from memory: sendable, and within the room.
  SELECT f.*, f.sendable AND row_number() OVER (PARTITION BY f.sendable ORDER BY f.seq, f.subscription_id) <= $1
         AS in_memory
  FROM fanout f
), deferred AS (${writeWaiting('ranked f JOIN due e USING (event_id) WHERE NOT f.in_memory', 'e.seq')}
), leased AS (
  UPDATE outbox_events e SET leased_until = now() + $3 * interval '1 millisecond', lease_token = $4,
         fanned_out_at = CASE WHEN EXISTS (SELECT 1 FROM ranked f WHERE f.event_id = e.event_id AND f.in_memory)
                         THEN NULL ELSE now() END
  FROM due WHERE e.event_id = due.event_id
  RETURNING 1
)
-- Always one row at least: how many events were due tells the dispatcher whether to fan out again.
SELECT n.*, x.* FROM (
  SELECT (SELECT count(*) FROM candidates)::int AS due_events, (SELECT count(*) FROM leased)::int AS events,
         (SELECT count(*) FROM deferred)::int AS deferred
) n LEFT JOIN (
  SELECT ${FANNED_OUT_SEND_COLUMNS('f', 'e')}
  FROM ranked f JOIN due e USING (event_id) JOIN subscriptions s ON s.id = f.subscription_id
  WHERE f.in_memory
  ORDER BY e.seq, f.subscription_id
) x ON true`,
});

/**
 * Writes the deliveries sent from memory, each once, with its outcome: one that succeeded is appended to the
 * delivery log (delivery_log, by its key), any other is a row of deliveries (to retry, or failed). It marks an
 * event fanned out when the last of its deliveries is written and every other one has its record, in either table
 * (deliveryRecorded): written by an earlier statement (which
 * committed before this one began: the dispatcher's writes go one at a time) or by this one. If one of them
 * could not be written, the event stays leased until its lease runs out and a fan-out sends that one again. A
 * retry, or a failure an operator may replay, keeps its own body; a success reads its event's. A delivery set
 * aside unsent (its subscriber paused, or its circuit open: no attempt time) is written pending with no attempt.
 *
 * All of it only under the event's lease as it was fanned out (its token): the event is locked first, so a
 * fan-out taking it after its lease lapsed either waits for this statement or has changed the token. A delivery
 * sent under a lease that was lost meanwhile writes no row and completes nothing; if the lease's new holder has
 * written its row already, the attempt joins that row's log (the receiver did get it), changing nothing else.
 */
export const RECORD_FANNED_OUT = statement({
  name: 'record-fanned-out',
  runBy: 'OutboxRepository.record',
  params: [
    "the deliveries' ids (chosen when fanned out)",
    'their subscriptions',
    "their events' ids",
    "their plants' ids",
    "their events' times",
    'their hops',
    "their origin events' ids",
    'their traceparents',
    "the attempts' times (attemptedAt)",
    'the HTTP statuses they got (null: no answer)',
    'their latencies, ms',
    'the errors they ended with (storable text)',
    'what the subscribers answered (storable text)',
    'the signatures sent',
    'the next status: pending (a retry), succeeded or failed',
    'the delay before a retry, ms (0 otherwise)',
    'why to disable the subscription (410 Gone), or null',
    "with $19: each (event, subscription) pair a completing event must have a row for, the event's id",
    "the pair's subscription",
    "the leases' tokens (the events' as fanned out)",
  ],
  text: `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::timestamptz[], $6::int[], $7::text[],
                       $8::text[], $9::timestamptz[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[],
                       $15::text[], $16::bigint[], $17::text[], $20::uuid[])
    AS t(id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
         attempted_at, status, latency_ms, error, response_body, signature, next_status, delay_ms, disable_reason,
         lease_token)
), owned AS MATERIALIZED (
  SELECT e.event_id, e.created_at FROM outbox_events e
  WHERE e.event_id IN (SELECT event_id FROM r) AND e.fanned_out_at IS NULL
    AND e.lease_token IN (SELECT lease_token FROM r WHERE r.event_id = e.event_id)
  ORDER BY e.event_id
  FOR UPDATE OF e
), known AS MATERIALIZED (
  -- Each record with what is written of its delivery already: its row in deliveries, or in the log (by its key,
  -- from its event's creation on). Under the event's lock a delivery cannot be written meanwhile: the owner's
  -- statements take the lock one after the other, and this snapshot sees what the previous one wrote.
  SELECT r.*, r.event_id IN (SELECT event_id FROM owned) AS owns, ev.created_at AS event_created_at,
         EXISTS (SELECT 1 FROM deliveries d WHERE d.subscription_id = r.subscription_id AND d.event_id = r.event_id)
           AS has_row,
         EXISTS (SELECT 1 FROM delivery_log l WHERE l.id = ${deliveryKey('r.event_id', 'r.subscription_id')}
                   AND ${inLogSince('l', 'ev.created_at')}) AS in_log
  FROM r LEFT JOIN outbox_events ev ON ev.event_id = r.event_id
), mine AS (
  SELECT * FROM known WHERE owns
), appended AS (
  -- Succeeded at once, and new: appended to the log, never to change again.
  INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
                            attempt_log)
  SELECT ${deliveryKey('r.event_id', 'r.subscription_id')}, r.subscription_id, r.event_id, r.plant_id, r.event_time,
         r.hops, r.origin_event_id, r.traceparent, jsonb_build_array(${attemptEntry('r')})
  FROM mine r
  WHERE r.next_status = 'succeeded' AND NOT r.has_row AND NOT r.in_log
    -- A subscription removed for good meanwhile (retention) takes its deliveries with it.
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = r.subscription_id)
  RETURNING 1
), written AS (
  -- To retry, failed, or a delivery whose row exists already: a row of the mutable table.
  INSERT INTO deliveries AS d (id, subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id,
                               traceparent, status, attempts, next_attempt_at, attempt_log)
  SELECT r.id, r.subscription_id, r.event_id, r.plant_id,
         CASE WHEN r.next_status <> 'succeeded' THEN (SELECT e.body FROM outbox_events e WHERE e.event_id = r.event_id) END,
         r.event_time, r.hops, r.origin_event_id, r.traceparent, r.next_status, ${attemptCount('r')},
         now() + r.delay_ms * interval '1 millisecond', ${attemptLog('r')}
  FROM mine r
  WHERE (r.next_status <> 'succeeded' OR r.has_row) AND NOT r.in_log
    AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = r.subscription_id)
  ON CONFLICT (subscription_id, event_id) DO UPDATE
    SET attempts = d.attempts + EXCLUDED.attempts, attempt_log = ${appendAttempts('d.attempt_log', 'EXCLUDED.attempt_log')}, updated_at = now()
  -- Failed for good by this attempt: written now (not joined to a row the lease's new holder wrote).
  RETURNING d.id AS delivery_id, d.subscription_id, d.event_id, d.plant_id, d.attempts, d.xmax = 0 AND d.status = 'failed'
            AS exhausted
), late AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, updated_at = now(),
         attempt_log = ${appendAttempts('d.attempt_log', `jsonb_build_array(${attemptEntry('r')})`)}
  FROM known r
  WHERE NOT r.owns AND d.subscription_id = r.subscription_id AND d.event_id = r.event_id
    AND r.attempted_at IS NOT NULL
  RETURNING 1
), late_in_log AS (
  -- Sent again (a lease lost, or a record whose answer was lost and is written again): the log's row keeps the
  -- attempt, and nothing else changes. The only update the log sees, and a rare one.
  UPDATE delivery_log l SET attempts = l.attempts + 1, updated_at = now(),
         attempt_log = ${appendAttempts('l.attempt_log', `jsonb_build_array(${attemptEntry('r')})`)}
  FROM known r
  WHERE r.in_log AND r.attempted_at IS NOT NULL AND l.id = ${deliveryKey('r.event_id', 'r.subscription_id')} AND ${inLogSince('l', 'r.event_created_at')}
  RETURNING 1
), expected AS (
  SELECT * FROM unnest($18::text[], $19::uuid[]) AS x(event_id, subscription_id)
), done AS (
  UPDATE outbox_events o SET fanned_out_at = now(), leased_until = NULL, lease_token = NULL
  WHERE o.event_id IN (SELECT event_id FROM expected) AND o.event_id IN (SELECT event_id FROM owned)
    AND o.event_id NOT IN (
      -- Events with a delivery neither written by this statement nor before. Uncorrelated, so hashed: not a scan
      -- of the batch for each expected pair of each event (quadratic in the batch, 500 records at most).
      SELECT x.event_id FROM expected x JOIN owned oe ON oe.event_id = x.event_id
      WHERE (x.event_id, x.subscription_id) NOT IN (SELECT event_id, subscription_id FROM mine)
        AND NOT ${deliveryRecorded('x.subscription_id', 'x.event_id', 'oe.created_at')})
  RETURNING 1
), ${disableGone('mine')},
${exhaustedNotices(`(SELECT w.*, r.attempted_at, r.status AS http_status, r.error
      FROM written w JOIN mine r ON r.id = w.delivery_id WHERE w.exhausted)`)},
${operationalEvents(`${subscriptionDisabledEvents('disabled')} UNION ALL ${deliveryExhaustedEvents()}`)}
SELECT (SELECT count(*) FROM op_deliveries)::int AS operational`,
});
