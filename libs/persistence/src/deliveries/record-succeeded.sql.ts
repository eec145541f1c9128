import { attemptEntry, deliveryKey, inLogSince } from '../sql/fragments/outbox';
import { statement } from '../sql/statement';

/**
 * RECORD_FANNED_OUT's common case alone: a batch of deliveries sent from memory whose every attempt succeeded at
 * once (no retry, no failure, nothing set aside, so nothing to disable and no operational event). Each is appended
 * to the delivery log by its key, and an event is marked fanned out when every (event, subscription) pair it must
 * have ($15, $16) is written: by this statement, or earlier, in either table (as deliveryRecorded).
 *
 * All or nothing: it writes only if every delivery's event is still leased to the claim that fanned it out (the
 * event is locked first, as in RECORD_FANNED_OUT) and none of the deliveries is written already (a row in
 * deliveries, or in the log). Otherwise it writes nothing and answers `clear` false, and the repository sends the
 * batch to RECORD_FANNED_OUT, which handles those cases (a lost lease's late record, a record written again). So
 * each delivery is still written once, in one table, only under its event's lease.
 *
 * Cheaper than RECORD_FANNED_OUT by its shape: what is written already is found in one pass over each table for
 * the whole batch (the batch's deliveries and the completing events' others together), not a probe per record
 * and per pair; none of the CTEs for retries, failures, late records, 410s and operational events is planned or
 * run. Sent unnamed, as RECORD_FANNED_OUT is, for the same reason.
 */
export const RECORD_SUCCEEDED = statement({
  name: 'record-succeeded',
  runBy: 'OutboxRepository.record',
  params: [
    'their subscriptions',
    "their events' ids",
    "their plants' ids",
    "their events' times",
    'their hops',
    "their origin events' ids",
    'their traceparents',
    "the attempts' times (attemptedAt)",
    'the HTTP statuses they got',
    'their latencies, ms',
    'the errors they ended with (storable text)',
    'what the subscribers answered (storable text)',
    'the signatures sent',
    "the leases' tokens (the events' as fanned out)",
    "with $16: each (event, subscription) pair a completing event must have a row for, the event's id",
    "the pair's subscription",
  ],
  text: `
WITH r AS MATERIALIZED (
  SELECT t.*, ${deliveryKey('t.event_id', 't.subscription_id')} AS key
  FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::timestamptz[], $5::int[], $6::text[], $7::text[],
              $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[], $13::text[], $14::uuid[])
    AS t(subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent, attempted_at, status,
         latency_ms, error, response_body, signature, lease_token)
), locked AS MATERIALIZED (
  -- The batch's events, locked by key. Looked up by an array of keys, which the planner takes as a few index
  -- probes whatever the statistics say: a filter on fanned_out_at here let it pick the partial index of events
  -- not yet fanned out instead, a scan of the whole backlog on each call. Whether each is still this claim's is
  -- asked of the row as locked (its newest version), in owned.
  SELECT e.event_id, e.created_at, e.fanned_out_at, e.lease_token FROM outbox_events e
  WHERE e.event_id = ANY ((SELECT array_agg(DISTINCT event_id) FROM r)::text[])
  ORDER BY e.event_id
  FOR UPDATE OF e
), owned AS MATERIALIZED (
  SELECT e.event_id, e.created_at FROM locked e
  WHERE e.fanned_out_at IS NULL AND (e.event_id, e.lease_token) IN (SELECT event_id, lease_token FROM r)
), expected AS (
  SELECT * FROM unnest($15::text[], $16::uuid[]) AS x(event_id, subscription_id)
), probed AS MATERIALIZED (
  -- Every delivery whose record this statement needs: the batch's (sent), and those its completing events must
  -- have that are not in it (written earlier, or not: then the event is not complete yet).
  SELECT r.event_id, r.subscription_id, r.key, true AS sent FROM r
  UNION ALL
  SELECT x.event_id, x.subscription_id, ${deliveryKey('x.event_id', 'x.subscription_id')}, false FROM expected x
  WHERE (x.event_id, x.subscription_id) NOT IN (SELECT event_id, subscription_id FROM r)
), found AS MATERIALIZED (
  -- Those written already, in either table: one pass over each for the whole batch, by arrays of keys (index
  -- probes, as in locked; joined to probed, a join chose whole scans of the day's log). Under the events' locks
  -- nothing of theirs is written meanwhile (see RECORD_FANNED_OUT's known).
  SELECT d.event_id, d.subscription_id FROM deliveries d
  WHERE d.subscription_id = ANY ((SELECT array_agg(DISTINCT subscription_id) FROM probed)::uuid[])
    AND d.event_id = ANY ((SELECT array_agg(DISTINCT event_id) FROM probed)::text[])
  UNION ALL
  SELECT l.event_id, l.subscription_id FROM delivery_log l
  WHERE l.id = ANY ((SELECT array_agg(key) FROM probed)::uuid[])
    AND ${inLogSince('l', '(SELECT min(created_at) FROM owned)')}
), clear AS MATERIALIZED (
  SELECT NOT EXISTS (SELECT 1 FROM r WHERE r.event_id NOT IN (SELECT event_id FROM owned))
     AND NOT EXISTS (SELECT 1 FROM probed p WHERE p.sent
                       AND (p.event_id, p.subscription_id) IN (SELECT event_id, subscription_id FROM found)) AS ok
), appended AS (
  INSERT INTO delivery_log (id, subscription_id, event_id, plant_id, event_time, hops, origin_event_id, traceparent,
                            attempt_log)
  SELECT r.key, r.subscription_id, r.event_id, r.plant_id, r.event_time, r.hops, r.origin_event_id, r.traceparent,
         jsonb_build_array(${attemptEntry('r')})
  FROM r
  WHERE (SELECT ok FROM clear)
    -- A subscription removed for good meanwhile (retention) takes its deliveries with it.
    AND r.subscription_id IN (SELECT id FROM subscriptions)
  RETURNING 1
), done AS (
  UPDATE outbox_events o SET fanned_out_at = now(), leased_until = NULL, lease_token = NULL
  WHERE (SELECT ok FROM clear)
    AND o.event_id IN (SELECT event_id FROM expected) AND o.event_id IN (SELECT event_id FROM owned)
    AND o.event_id NOT IN (
      -- Events with a delivery neither in this batch nor written before.
      SELECT p.event_id FROM probed p
      WHERE NOT p.sent AND (p.event_id, p.subscription_id) NOT IN (SELECT event_id, subscription_id FROM found))
  RETURNING 1
)
SELECT ok AS clear FROM clear`,
});
