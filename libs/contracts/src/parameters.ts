import { buildOpenApiDocument } from './openapi/document';
import { ajv, FieldError, toFieldErrors } from './schema-registry';

interface Parameter {
  name: string;
  in: string;
  schema: object;
}

const document = buildOpenApiDocument();
const operationsById = new Map<string, { parameters?: Parameter[] }>();
for (const item of Object.values(document.paths) as Record<string, { operationId?: string; parameters?: Parameter[] }>[]) {
  for (const op of Object.values(item)) if (op.operationId) operationsById.set(op.operationId, op);
}

/**
 * A validator for one query or path parameter, compiled from the schema the served document declares for
 * it (so `since` is checked as the RFC 3339 date-time the document promises, not as whatever Date.parse
 * accepts: "0", "-1", "1.5" all parse). Returns the field errors, empty when the value is valid.
 */
export function parameterValidator(operationId: string, name: string): (value: string) => FieldError[] {
  const param = operationsById.get(operationId)?.parameters?.find((p) => p.name === name);
  if (!param) throw new Error(`operation ${operationId} declares no parameter ${name}`);
  const validate = ajv.compile(param.schema);
  return (value) => (validate(value) ? [] : toFieldErrors(validate.errors).map((e) => ({ field: name, message: e.message })));
}
