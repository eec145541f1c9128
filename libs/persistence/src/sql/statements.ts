// Every statement the repositories send, by area: each area's `.sql` file beside its repository (./sql-file.ts).
// An area left out of this list fails statements.spec.ts (a text sent that no listed statement has, or a `.sql`
// file no area reads).
import { PLANTS_SQL } from '../plants/plant.repository';
import { AUDIT_SQL } from '../audit/audit.repository';
import { PORTAL_LINKS_SQL } from '../portal-links/portal-link.repository';
import { RETENTION_SQL } from '../retention/retention.repository';
import { DELIVERIES_SQL } from '../deliveries/delivery.repository';
import { BACKFILLS_SQL } from '../backfills/backfill.repository';
import { SUBSCRIBER_HEALTH_SQL } from '../subscriber-health/subscriber-health.repository';
import { DEAD_LETTERS_SQL } from '../dead-letters/dead-letter.repository';
import { OPERATIONAL_EVENTS_SQL } from '../operational/operational-event.repository';
import { SUBSCRIPTIONS_SQL } from '../subscriptions/subscription.repository';
import { CLAIMS_SQL, FAN_OUT_SQL } from '../deliveries/outbox.repository';
import { INGEST_SQL } from '../ingest/ingest.repository';
import { NamedStatement, SqlFile } from './sql-file';

export const SQL_FILES: Record<string, SqlFile> = {
  audit: AUDIT_SQL,
  backfills: BACKFILLS_SQL,
  claims: CLAIMS_SQL,
  'dead-letters': DEAD_LETTERS_SQL,
  deliveries: DELIVERIES_SQL,
  'fan-out': FAN_OUT_SQL,
  ingest: INGEST_SQL,
  operational: OPERATIONAL_EVENTS_SQL,
  plants: PLANTS_SQL,
  'portal-links': PORTAL_LINKS_SQL,
  retention: RETENTION_SQL,
  'subscriber-health': SUBSCRIBER_HEALTH_SQL,
  subscriptions: SUBSCRIPTIONS_SQL,
};

export const STATEMENTS: Record<string, readonly NamedStatement[]> = Object.fromEntries(
  Object.entries(SQL_FILES).map(([area, file]) => [area, file.statements]),
);
