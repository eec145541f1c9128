import { operationalEvents } from '../sql/fragments/operational';
import { statement } from '../sql/statement';

/** One operational event from TypeScript (OPERATIONAL_EVENTS.emit): a pending delivery per operational subscriber. */
export const EMIT_OPERATIONAL_EVENT = statement({
  name: 'emit-operational-event',
  runBy: 'OperationalEventRepository.emit',
  params: ['its type (OperationalEventType)', 'the subscription it is about, or null', 'its data (jsonb)'],
  text: `
WITH ${operationalEvents('SELECT $1::text AS type, $2::uuid AS subscription_id, $3::jsonb AS data')}
SELECT (SELECT count(*) FROM op_deliveries)::int AS deliveries`,
});
