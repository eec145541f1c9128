import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
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
 * cannot carry exactly, and text PostgreSQL cannot hold exactly (see storableText). The served document says so.
 */
export const acceptedNewPlantSchema = {
  $id: 'https://plant.store/schemas/accepted-new-plant.json',
  allOf: [
    { $ref: NEW_PLANT_REF },
    {
      type: 'object',
      properties: {
        id: { type: 'integer', minimum: -MAX_PLANT_ID, maximum: MAX_PLANT_ID },
        name: { storableText: true },
        tag: { storableText: true },
      },
    },
  ],
};

/**
 * A NUL character cannot be stored in a PostgreSQL text column, and a lone UTF-16 surrogate (valid in a JSON
 * string escape, but not Unicode text) would be replaced by U+FFFD on the way in: refused at the edge, so a
 * 200 always means the plant is stored exactly as sent.
 */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u; // with the u flag, paired surrogates are one code point: not matched
export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL (\\u0000) or an unpaired surrogate (\\uD800-\\uDFFF)';

export const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
// ajv-formats also accepts a `urn:uuid:` prefix, which PostgreSQL's uuid type does not: the plain form only.
ajv.addFormat('uuid', /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i);
ajv.addKeyword({
  keyword: 'storableText',
  schemaType: 'boolean',
  validate: (enabled: boolean, value: unknown) => !enabled || typeof value !== 'string' || !UNSTORABLE.test(value),
  errors: false,
});
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
    const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field = e.keyword === 'required' ? [base, e.params.missingProperty].filter(Boolean).join('.') : base;
    const message =
      e.keyword === 'required'
        ? 'is required'
        : e.keyword === 'storableText'
          ? UNSTORABLE_TEXT_MESSAGE
          : (e.message ?? 'is invalid');
    if (!seen.has(field || '(body)')) seen.set(field || '(body)', message);
  }
  return [...seen].map(([field, message]) => ({ field, message }));
}

export function compiled<T>(schemaId: string): ValidateFunction<T> {
  const fn = ajv.getSchema<T>(schemaId);
  if (!fn) throw new Error(`schema ${schemaId} is not registered`);
  return fn;
}
