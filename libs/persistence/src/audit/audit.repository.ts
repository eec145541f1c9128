import { Pool } from 'pg';
import { toStorableJson } from '@app/contracts';
import { sqlFile } from '../sql/sql-file';

export const AUDIT_SQL = sqlFile(__dirname, 'audit.sql');
const RECORD_AUDIT_EVENT = AUDIT_SQL.statement('record-audit-event');
const RECORD_AUDIT_EVENTS = AUDIT_SQL.statement('record-audit-events');
const LIST_AUDIT_EVENTS = AUDIT_SQL.statement('list-audit-events');
const COUNT_RECENT_ACTIONS = AUDIT_SQL.statement('count-recent-actions');

/** A row of `audit_events`: one change made through the admin API. */
export interface AuditRow {
  id: number;
  /** The same as `id`, under the name the admin API's paging uses. */
  seq: number;
  at: Date;
  actor: string;
  action: string;
  subscription_id: string | null;
  delivery_id: string | null;
  details: Record<string, unknown>;
}

export type NewAuditEvent = Pick<AuditRow, 'actor' | 'action'> &
  Partial<Pick<AuditRow, 'subscription_id' | 'delivery_id' | 'details'>>;

export interface AuditFilter {
  subscriptionId?: string;
  since?: Date;
  until?: Date;
}

/** Details quote what admins and subscribers sent (a URL, a reason): made storable, as jsonb refuses \u0000. */
export class AuditRepository {
  constructor(private readonly pool: Pool) {}

  async record(e: NewAuditEvent): Promise<void> {
    await this.pool.query(
      RECORD_AUDIT_EVENT.text,
      RECORD_AUDIT_EVENT.values({
        actor: e.actor,
        action: e.action,
        subscription: e.subscription_id ?? null,
        delivery: e.delivery_id ?? null,
        details: toStorableJson(e.details ?? {}),
      }),
    );
  }

  /** Several events in one statement (a bulk action on up to 500 dead letters is one round trip, not 500). */
  async recordMany(events: NewAuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.pool.query(
      RECORD_AUDIT_EVENTS.text,
      RECORD_AUDIT_EVENTS.values({
        actors: events.map((e) => e.actor),
        actions: events.map((e) => e.action),
        subscriptions: events.map((e) => e.subscription_id ?? null),
        deliveries: events.map((e) => e.delivery_id ?? null),
        details: events.map((e) => toStorableJson(e.details ?? {})),
      }),
    );
  }

  /** Newest first, `limit` rows older than `beforeId` (the page cursor). */
  async list(filter: AuditFilter, limit: number, beforeId: number | null): Promise<AuditRow[]> {
    const { rows } = await this.pool.query<AuditRow>(
      LIST_AUDIT_EVENTS.text,
      LIST_AUDIT_EVENTS.values({
        subscription: filter.subscriptionId ?? null,
        since: filter.since ?? null,
        until: filter.until ?? null,
        before: beforeId,
        limit,
      }),
    );
    return rows;
  }

  /** Times actors named `actorPrefix…` took `action` on the subscription in the last `seconds`; the oldest. */
  async countRecent(
    subscriptionId: string,
    action: string,
    actorPrefix: string,
    seconds: number,
  ): Promise<{ count: number; oldest: Date | null }> {
    const escaped = actorPrefix.replace(/[\\%_]/g, (c) => `\\${c}`);
    const { rows } = await this.pool.query<{ count: number; oldest: Date | null }>(
      COUNT_RECENT_ACTIONS.text,
      COUNT_RECENT_ACTIONS.values({
        subscription: subscriptionId,
        action,
        actorPrefix: escaped,
        windowSeconds: seconds,
      }),
    );
    return rows[0];
  }
}
