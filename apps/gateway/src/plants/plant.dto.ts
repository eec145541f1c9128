import { PlantRow } from '@app/persistence';

/** A stored plant as the read API returns it (StoredPlant in /openapi.json), with any other properties it came with. */
export interface StoredPlantDto {
  [property: string]: unknown;
  id: number;
  name: string;
  tag?: string;
  createdAt: string;
  updatedAt: string;
  lastEventId: string;
}

export const mapPlant = (r: PlantRow): StoredPlantDto => ({
  ...r.extra, // first: the plant's own fields and ours below always win
  id: r.id,
  name: r.name,
  ...(r.tag === null ? {} : { tag: r.tag }),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  lastEventId: r.last_event_id,
});
