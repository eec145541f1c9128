import { statement } from '../sql/statement';
import {
  deliveryExhaustedEvents,
  exhaustedNotices,
  operationalEvents,
  subscriptionDisabledEvents,
} from '../sql/fragments/operational';
import { appendAttempts, attemptEntry, disableGone } from '../sql/fragments/outbox';

/**
 * Records attempts of claimed rows. Only the claim that holds a row's lease (its token) records the outcome: the
 * row is locked first, so a claim taking it after its lease lapsed either waits for this statement or has changed
 * the token this one compares. An attempt sent under a lease that was lost meanwhile is only added to the log
 * (the receiver did get it), and counted: it changes neither the status nor the lease of the claim that holds it.
 */
export const RECORD_ATTEMPTS = statement({
  name: 'record-attempts',
  runBy: 'OutboxRepository.record',
  params: [
    "the claimed deliveries' ids",
    "the attempts' times (attemptedAt)",
    'the HTTP statuses they got (null: no answer)',
    'their latencies, ms',
    'the errors they ended with (storable text)',
    'what the subscribers answered (storable text)',
    'the next status: pending (a retry), succeeded or failed',
    'the delay before a retry, ms (0 otherwise)',
    'why to disable the subscription (410 Gone), or null',
    'the signatures sent',
    "the claims' lease tokens",
  ],
  text: `
WITH r AS (
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[],
                       $11::uuid[])
    AS t(delivery_id, attempted_at, status, latency_ms, error, response_body, next_status, delay_ms, disable_reason,
         signature, lease_token)
), owned AS MATERIALIZED (
  SELECT d.id FROM deliveries d JOIN r ON r.delivery_id = d.id
  WHERE d.lease_token = r.lease_token AND d.status = 'pending'
  ORDER BY d.id
  FOR UPDATE OF d
), updated AS (
  UPDATE deliveries d SET attempts = d.attempts + 1, updated_at = now(),
         attempt_log = ${appendAttempts('d.attempt_log', `jsonb_build_array(${attemptEntry('r')})`)},
         status = CASE WHEN o.id IS NULL THEN d.status ELSE r.next_status END,
         next_attempt_at = CASE WHEN o.id IS NULL THEN d.next_attempt_at
                           ELSE now() + r.delay_ms * interval '1 millisecond' END,
         leased_until = CASE WHEN o.id IS NULL THEN d.leased_until END,
         lease_token = CASE WHEN o.id IS NULL THEN d.lease_token END
  FROM r LEFT JOIN owned o ON o.id = r.delivery_id
  WHERE d.id = r.delivery_id -- a delivery deleted meanwhile (subscription gone) is skipped
  RETURNING d.id AS delivery_id, d.subscription_id, d.event_id, d.plant_id, d.attempts, r.attempted_at,
            r.status AS http_status, r.error, CASE WHEN o.id IS NOT NULL THEN r.disable_reason END AS disable_reason,
            o.id IS NOT NULL AND r.next_status = 'failed' AND d.event_type IS NULL AS exhausted
), ${disableGone('updated')},
${exhaustedNotices('(SELECT * FROM updated WHERE exhausted)')},
${operationalEvents(`${subscriptionDisabledEvents('disabled')} UNION ALL ${deliveryExhaustedEvents()}`)}
SELECT (SELECT count(*) FROM op_deliveries)::int AS operational`,
});
