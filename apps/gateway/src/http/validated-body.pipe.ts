import { PipeTransform } from '@nestjs/common';
import { Validation } from '@app/contracts';
import { invalidFields, ProblemException } from '@app/observability';
import { notStorableAsSent } from './stored-as-sent';

/**
 * A body validated with a schema from the served document, and checked to be stored as sent (no rounded number,
 * no text PostgreSQL refuses: see stored-as-sent); 422 names each bad field, the schema's complaint first where
 * both have one. An `optional` body may be left out, and is then `{}`.
 */
export function validBody<T>(validate: (body: unknown) => Validation<T>, body: unknown, { optional = false } = {}): T {
  if (body === undefined && optional) body = {};
  if (body === undefined) throw ProblemException.of('malformedJson', 'The body is empty; send a JSON object');
  const result = validate(body);
  const unstorable = notStorableAsSent(body);
  if (result.ok && unstorable.length === 0) return result.value;
  const errors = new Map<string, string>();
  for (const e of [...(result.ok ? [] : result.errors), ...unstorable])
    if (!errors.has(e.field)) errors.set(e.field, e.message);
  throw invalidFields([...errors].map(([field, message]) => ({ field, message })));
}

/** validBody as a Nest pipe, for a controller's `@Body()`. */
export function validatedBody<T>(
  validate: (body: unknown) => Validation<T>,
  options: { optional?: boolean } = {},
): PipeTransform<unknown, T> {
  return { transform: (body: unknown): T => validBody(validate, body, options) };
}
