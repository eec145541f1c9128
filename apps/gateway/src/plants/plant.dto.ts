import type { Schema } from '@app/contracts';
import { PlantRow } from '@app/persistence';

/** A stored plant as the read API returns it, with any other properties it came with (the document's StoredPlant). */
export type StoredPlantDto = Schema<'StoredPlant'>;

export const mapPlant = (r: PlantRow): StoredPlantDto => ({
  ...r.extra, // first: the plant's own fields and ours below always win
  id: r.id,
  name: r.name,
  ...(r.tag === null ? {} : { tag: r.tag }),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  lastEventId: r.last_event_id,
});
