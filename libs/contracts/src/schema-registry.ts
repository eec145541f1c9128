import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import type { DataValidationCxt } from 'ajv/dist/types';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import {
  fieldName,
  toStorableText,
  UNSTORABLE_KEY_MESSAGE,
  UNSTORABLE_TEXT_MESSAGE,
  unstorableTexts,
} from './storable-json';
import { seedDocument } from './openapi/seed';

// One Ajv (JSON Schema 2020-12, which OAS 3.1 schemas are) loaded with the seed document's components, so
// every validator below compiles the schema straight from the OpenAPI document: no second copy.
const DOC_ID = 'https://plant.store/openapi.json';
export const NEW_PLANT_REF = `${DOC_ID}#/components/schemas/NewPlant`;

import { MAX_PLANT_ID } from './plant-id';

export { MAX_PLANT_ID };

/**
 * NewPlant as Plant Store accepts it: the seed's schema (an int64 id, any sign: 0 included, as Swagger UI's own
 * example sends), plus what the service must refuse beyond it: an id outside ±(2^53 - 1), which a JSON number
 * cannot carry exactly, and text PostgreSQL cannot hold exactly, anywhere in the body, property names included
 * (`storable`, see storable-json.ts). The worker validates consumed events with this same schema. The served
 * document says so.
 */
export const acceptedNewPlantSchema = {
  $id: 'https://plant.store/schemas/accepted-new-plant.json',
  allOf: [
    { $ref: NEW_PLANT_REF },
    {
      type: 'object',
      storable: true,
      properties: {
        id: { type: 'integer', minimum: -MAX_PLANT_ID, maximum: MAX_PLANT_ID },
      },
    },
  ],
};

export const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
// ajv-formats also accepts a `urn:uuid:` prefix, which PostgreSQL's uuid type does not: the plain form only.
ajv.addFormat('uuid', /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i);
// RFC 3339 as ajv-formats checks it, and then a real instant: a leap second (23:59:60) passes the grammar but
// is no JavaScript Date (nor one PostgreSQL keeps: it moves it to the next minute), so it is refused, 422
// naming the parameter, rather than reaching SQL as 'Invalid Date'.
const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean };
ajv.addFormat('date-time', { type: 'string', validate: (s) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)) });
ajv.addKeyword({ keyword: 'storable', schemaType: 'boolean', errors: true, validate: storable });
ajv.addKeyword('components');
ajv.addVocabulary(['example', 'x-internal']);
ajv.addSchema({ $id: DOC_ID, components: seedDocument.components });
ajv.addSchema(acceptedNewPlantSchema);

export interface FieldError {
  field: string;
  message: string;
}

/** Ajv's errors as one entry per offending field, with a JSON-pointer-ish dotted path. */
export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  const seen = new Map<string, string>();
  for (const e of errors ?? []) {
    if (e.keyword === 'allOf' || e.keyword === 'if') continue;
    // A hostile key is named by its escape: the field goes on to problems, logs and dead-letter reasons.
    const base = toStorableText(e.instancePath.replace(/^\//, '').replace(/\//g, '.'));
    const field = e.keyword === 'required' ? [base, e.params.missingProperty].filter(Boolean).join('.') : base;
    const message = e.keyword === 'required' ? 'is required' : (e.message ?? 'is invalid');
    if (!seen.has(field || '(body)')) seen.set(field || '(body)', message);
  }
  return [...seen].map(([field, message]) => ({ field, message }));
}

/** Each string of a value that PostgreSQL would refuse or alter, as a field error: what `storable` reports. */
export function unstorableFields(value: unknown): FieldError[] {
  return unstorableTexts(value).map(({ path, key }) => ({
    field: fieldName(path) || '(body)',
    message: key ? UNSTORABLE_KEY_MESSAGE : UNSTORABLE_TEXT_MESSAGE,
  }));
}

/** One error per field, the first given for it: a schema's complaint before a later check's. */
export function firstPerField(errors: FieldError[]): FieldError[] {
  const seen = new Map<string, string>();
  for (const e of errors) if (!seen.has(e.field)) seen.set(e.field, e.message);
  return [...seen].map(([field, message]) => ({ field, message }));
}

export function compiled<T>(schemaId: string): ValidateFunction<T> {
  const fn = ajv.getSchema<T>(schemaId);
  if (!fn) throw new Error(`schema ${schemaId} is not registered`);
  return fn;
}

/** `storable: true`: no string in the value, at any depth, property names included, that PostgreSQL refuses. */
function storable(enabled: boolean, value: unknown, _schema?: unknown, cxt?: DataValidationCxt): boolean {
  const found = enabled ? unstorableTexts(value) : [];
  storable.errors = found.map(({ path, key }) => ({
    keyword: 'storable',
    instancePath:
      (cxt?.instancePath ?? '') + path.map((s) => '/' + s.replace(/~/g, '~0').replace(/\//g, '~1')).join(''),
    message: key ? UNSTORABLE_KEY_MESSAGE : UNSTORABLE_TEXT_MESSAGE,
    params: {},
  }));
  return found.length === 0;
}
storable.errors = [] as Partial<ErrorObject>[];
