import { buildOpenApiDocument } from './openapi/document';
import { ajv, FieldError, toFieldErrors } from './schema-registry';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: { type?: string; default?: unknown };
}

const document = buildOpenApiDocument();
const operationsById = new Map<string, { parameters?: Parameter[] }>();
for (const item of Object.values(document.paths) as Record<
  string,
  { operationId?: string; parameters?: Parameter[] }
>[]) {
  for (const op of Object.values(item)) if (op.operationId) operationsById.set(op.operationId, op);
}

export type ParsedParameter = { ok: true; value: unknown } | { ok: false; errors: FieldError[] };

/**
 * A parser for one path or query parameter, compiled from the schema the served document declares for it, so
 * the edge checks exactly what the document promises (`since` as an RFC 3339 date-time, not whatever
 * Date.parse accepts, and only one that is a real instant: no leap second; an id as a UUID; a limit from 1 to
 * 500). Integers are read from their decimal digits only ("1e3", "0x10", " 5" are not integers here), and only
 * those a JavaScript number holds exactly. An absent optional parameter gives its default (or
 * undefined); an absent required one is an error.
 */
export function parameterParser(operationId: string, name: string): (raw: string | undefined) => ParsedParameter {
  const param = operationsById.get(operationId)?.parameters?.find((p) => p.name === name);
  if (!param) throw new Error(`operation ${operationId} declares no parameter ${name}`);
  const validate = ajv.compile(param.schema);
  const integer = param.schema.type === 'integer';
  return (raw) => {
    if (raw === undefined || (raw === '' && param.in === 'query')) {
      if (param.required) return { ok: false, errors: [{ field: name, message: 'is required' }] };
      return { ok: true, value: param.schema.default };
    }
    const value = integer && /^-?\d{1,20}$/.test(raw) ? Number(raw) : raw;
    // Digits beyond 2^53 - 1 would be read rounded: refused, whatever bounds the schema declares (or not).
    if (typeof value === 'number' && !Number.isSafeInteger(value))
      return { ok: false, errors: [{ field: name, message: 'must be an integer within ±(2^53 - 1)' }] };
    if (validate(value)) return { ok: true, value };
    const errors =
      integer && typeof value === 'string' ? [{ message: 'must be an integer' }] : toFieldErrors(validate.errors);
    return { ok: false, errors: errors.map((e) => ({ field: name, message: e.message })) };
  };
}
