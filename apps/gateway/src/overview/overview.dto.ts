import type { Schema } from '@app/contracts';
import { MinuteRow } from '@app/persistence';

/** GET /overview: the document's Overview, through the generated types. */
export type OverviewDto = Schema<'Overview'>;

export const mapMinute = (r: MinuteRow): OverviewDto['lastHour'][number] => ({
  minute: r.minute.toISOString(),
  accepted: r.accepted,
  delivered: r.delivered,
  failed: r.failed,
});
