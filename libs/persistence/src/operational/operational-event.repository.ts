import { Pool } from 'pg';
import { OperationalEventData, OperationalEventType } from '@app/contracts';
import { OperationalEvents, SqlClient } from '@app/delivery';
import { sqlFile } from '../sql/sql-file';

export const OPERATIONAL_EVENTS_SQL = sqlFile(__dirname, 'operational-events.sql');
const EMIT_OPERATIONAL_EVENT = OPERATIONAL_EVENTS_SQL.statement('emit-operational-event');

/** OPERATIONAL_EVENTS: an operational event in one INSERT, in the caller's transaction when it gives one. */
export class OperationalEventRepository implements OperationalEvents {
  constructor(private readonly pool: Pool) {}

  async emit<T extends OperationalEventType>(
    type: T,
    data: OperationalEventData[T],
    about: string | null = null,
    db: SqlClient = this.pool,
  ): Promise<number> {
    const result = (await db.query(
      EMIT_OPERATIONAL_EVENT.text,
      EMIT_OPERATIONAL_EVENT.values({ type, subscription: about, data: JSON.stringify(data) }),
    )) as {
      rows: { deliveries: number }[];
    };
    return result.rows[0]?.deliveries ?? 0;
  }
}
