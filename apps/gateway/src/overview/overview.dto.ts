import { MinuteRow } from '@app/persistence';

/** GET /overview (Overview in /openapi.json). */
export interface OverviewDto {
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
