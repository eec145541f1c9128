import { MinuteRow } from '@app/persistence';

/** GET /overview (Overview in /openapi.json). */
export interface OverviewDto {
  /** Events stored in the last 24 hours; events accepted and not yet stored (null: the broker did not say). */
  events: { stored: number; consumerLag: number | null };
  deliveries: { pending: number; succeeded: number; failed: number };
  deadLetters: number;
  lastHour: { minute: string; accepted: number; delivered: number; failed: number }[];
}

export const mapMinute = (r: MinuteRow) => ({
  minute: r.minute.toISOString(),
  accepted: r.accepted,
  delivered: r.delivered,
  failed: r.failed,
});
