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
