import type { Schema } from '@app/contracts';
import { BackfillRow } from '@app/persistence';

/** A backfill as the admin API returns it (the document's Backfill, through the generated types). */
export type BackfillDto = Schema<'Backfill'>;

export const mapBackfill = (r: BackfillRow): BackfillDto => ({
  id: r.id,
  subscriptionId: r.subscription_id,
  state: r.state,
  since: r.since?.toISOString() ?? null,
  ratePerSecond: r.rate_per_second,
  total: r.total,
  queued: r.queued,
  // Answered for good: what was queued, less what is still pending and what was dropped unsent.
  sent: Math.max(0, r.queued - r.pending - r.superseded - r.dropped),
  pending: r.pending,
  superseded: r.superseded,
  lastPlantId: r.after_plant_id === null ? null : Number(r.after_plant_id),
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  finishedAt: r.finished_at?.toISOString() ?? null,
});
