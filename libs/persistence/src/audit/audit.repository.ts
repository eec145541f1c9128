import { Pool } from 'pg';
import { toStorableJson } from '@app/contracts';
import { COUNT_RECENT_ACTIONS, LIST_AUDIT_EVENTS, RECORD_AUDIT_EVENT, RECORD_AUDIT_EVENTS } from './audit.sql';

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
    await this.pool.query(RECORD_AUDIT_EVENT.text, [
      e.actor,
      e.action,
      e.subscription_id ?? null,
      e.delivery_id ?? null,
      toStorableJson(e.details ?? {}),
    ]);
  }

  /** Several events in one statement (a bulk action on up to 500 dead letters is one round trip, not 500). */
  async recordMany(events: NewAuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.pool.query(RECORD_AUDIT_EVENTS.text, [
      events.map((e) => e.actor),
      events.map((e) => e.action),
      events.map((e) => e.subscription_id ?? null),
      events.map((e) => e.delivery_id ?? null),
      events.map((e) => toStorableJson(e.details ?? {})),
    ]);
  }

  /** Newest first, `limit` rows older than `beforeId` (the page cursor). */
  async list(filter: AuditFilter, limit: number, beforeId: number | null): Promise<AuditRow[]> {
    const { rows } = await this.pool.query<AuditRow>(LIST_AUDIT_EVENTS.text, [
      filter.subscriptionId ?? null,
      filter.since ?? null,
      filter.until ?? null,
      beforeId,
      limit,
    ]);
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
    const { rows } = await this.pool.query<{ count: number; oldest: Date | null }>(COUNT_RECENT_ACTIONS.text, [
      subscriptionId,
      action,
      escaped,
      seconds,
    ]);
    return rows[0];
  }
}
