import { PipeTransform } from '@nestjs/common';
import { firstPerField, Validation } from '@app/contracts';
import { invalidFields, ProblemException } from '@app/observability';
import { roundedByTheParser } from './stored-as-sent';

/**
 * A body validated with a schema from the served document (and, by every validator, for text PostgreSQL refuses),
 * and checked for a number the JSON parser rounded (see stored-as-sent): stored as sent, or 422 naming each bad
 * field, the schema's complaint first where both have one. An `optional` body may be left out, and is then `{}`.
 */
export function validBody<T>(validate: (body: unknown) => Validation<T>, body: unknown, { optional = false } = {}): T {
  if (body === undefined && optional) body = {};
  if (body === undefined) throw ProblemException.of('malformedJson', 'The body is empty; send a JSON object');
  const result = validate(body);
  const rounded = roundedByTheParser(body);
  if (result.ok && rounded.length === 0) return result.value;
  throw invalidFields(firstPerField([...(result.ok ? [] : result.errors), ...rounded]));
}

/** validBody as a Nest pipe, for a controller's `@Body()`. */
export function validatedBody<T>(
  validate: (body: unknown) => Validation<T>,
  options: { optional?: boolean } = {},
): PipeTransform<unknown, T> {
  return { transform: (body: unknown): T => validBody(validate, body, options) };
}
