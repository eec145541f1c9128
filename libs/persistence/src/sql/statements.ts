// Every statement the repositories send, by area. The areas in `.sql` files (SQL_FILES) list what their file
// holds; the others are what `npm run generate:sql` renders into libs/persistence/sql/<area>.sql. A statement left
// out of this list fails statements.spec.ts.
import * as fanOut from '../deliveries/fan-out.sql';
import * as outbox from '../deliveries/outbox.sql';
import * as recordSucceeded from '../deliveries/record-succeeded.sql';
import * as ingest from '../ingest/apply-events.sql';
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
import { CLAIMS_SQL } from '../deliveries/outbox.repository';
import { SqlFile } from './sql-file';
import { DeclaredStatement, Statement } from './statement';

/** The areas still declared in TypeScript, rendered into libs/persistence/sql/<area>.sql. */
export const RENDERED: Record<string, readonly DeclaredStatement[]> = {
  ingest: [ingest.APPLY_EVENTS],
  outbox: [fanOut.FAN_OUT, fanOut.RECORD_FANNED_OUT, recordSucceeded.RECORD_SUCCEEDED, outbox.RECORD_ATTEMPTS],
};

/** The areas whose statements are in a `.sql` file beside their repository, each statement once. */
export const SQL_FILES: Record<string, SqlFile> = {
  audit: AUDIT_SQL,
  backfills: BACKFILLS_SQL,
  claims: CLAIMS_SQL,
  'dead-letters': DEAD_LETTERS_SQL,
  deliveries: DELIVERIES_SQL,
  operational: OPERATIONAL_EVENTS_SQL,
  plants: PLANTS_SQL,
  'portal-links': PORTAL_LINKS_SQL,
  retention: RETENTION_SQL,
  'subscriber-health': SUBSCRIBER_HEALTH_SQL,
  subscriptions: SUBSCRIPTIONS_SQL,
};

const FILED = Object.fromEntries(Object.entries(SQL_FILES).map(([area, file]) => [area, file.statements]));

export const STATEMENTS: Record<string, readonly Statement[]> = { ...RENDERED, ...FILED };

export const REGENERATE_SQL = 'npm run generate:sql';

/**
 * One area's file: per statement a header (its name, the method that sends it, one line per parameter), then its
 * text exactly as sent, up to the `;` that ends it in the file (the text itself has none at its end).
 */
export function renderSqlFile(area: string): string {
  const head = [
    `-- Generated from libs/persistence/src by \`${REGENERATE_SQL}\`: do not edit (a test fails while it is stale).`,
    `-- Every ${area} statement the repositories send, exactly as sent, with what each parameter means.`,
  ];
  const blocks = RENDERED[area].map((s) => {
    const header = [`-- ${s.name}`, `-- Sent by ${s.runBy}.`, ...s.params.map((p, i) => `-- $${i + 1}: ${p}`)];
    return `${header.join('\n')}${s.text.startsWith('\n') ? '' : '\n'}${s.text};\n`;
  });
  return `${head.join('\n')}\n\n${blocks.join('\n')}`;
}
