import { statement } from '../sql/statement';

export const RECORD_AUDIT_EVENT = statement({
  name: 'record-audit-event',
  runBy: 'AuditRepository.record',
  params: [
    'who acted (an admin key, or worker)',
    'what was done (e.g. subscription.disabled)',
    'the subscription concerned, or null',
    'the delivery concerned, or null',
    'details (jsonb, storable)',
  ],
  text: 'INSERT INTO audit_events (actor, action, subscription_id, delivery_id, details) VALUES ($1, $2, $3, $4, $5)',
});

export const RECORD_AUDIT_EVENTS = statement({
  name: 'record-audit-events',
  runBy: 'AuditRepository.recordMany',
  params: ["the events' actors", 'their actions', 'their subscriptions', 'their deliveries', 'their details (jsonb)'],
  text: `INSERT INTO audit_events (actor, action, subscription_id, delivery_id, details)
       SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::uuid[], $5::jsonb[])`,
});

export const LIST_AUDIT_EVENTS = statement({
  name: 'list-audit-events',
  runBy: 'AuditRepository.list',
  params: [
    "the filter's subscription, or null",
    'at or after, or null',
    'before, or null',
    'the page: ids below this one, or null for the newest',
    'how many rows at most',
  ],
  text: `SELECT *, id AS seq FROM audit_events
       WHERE ($1::uuid IS NULL OR subscription_id = $1) AND ($2::timestamptz IS NULL OR at >= $2)
         AND ($3::timestamptz IS NULL OR at < $3) AND ($4::bigint IS NULL OR id < $4)
       ORDER BY id DESC LIMIT $5`,
});

/**
 * How many times, within a window up to now, actors whose name starts with a prefix (`portal-link:`) took an
 * action on a subscription, and when the oldest of those was: a daily budget's count and when it frees a call.
 */
export const COUNT_RECENT_ACTIONS = statement({
  name: 'count-recent-actions',
  runBy: 'AuditRepository.countRecent',
  params: ['the subscription', 'the action', "the actors' name prefix (LIKE, escaped)", 'the window, seconds'],
  text: `SELECT count(*)::int AS count, min(at) AS oldest FROM audit_events
       WHERE subscription_id = $1 AND action = $2 AND actor LIKE $3 || '%'
         AND at > now() - $4 * interval '1 second'`,
});
