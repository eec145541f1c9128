import { acceptedNewPlantSchema, compiled, FieldError, toFieldErrors } from './schema-registry';

/** The New Plant webhook's payload (OpenAPI `NewPlant`). Extra properties are allowed by the contract. */
export interface NewPlant {
  id: number;
  name: string;
  tag?: string;
  [extra: string]: unknown;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

const validate = compiled<NewPlant>(acceptedNewPlantSchema.$id);

export function validateNewPlant(body: unknown): Validation<NewPlant> {
  return validate(body) ? { ok: true, value: body } : { ok: false, errors: toFieldErrors(validate.errors) };
}

/** The body sent to subscribers: the NewPlant fields the contract names, in a fixed order. */
export function toNewPlantBody(plant: { id: number | string; name: string; tag?: string | null }): NewPlant {
  const body: NewPlant = { id: Number(plant.id), name: plant.name };
  if (plant.tag !== undefined && plant.tag !== null) body.tag = plant.tag;
  return body;
}
