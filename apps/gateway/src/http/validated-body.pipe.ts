import { PipeTransform } from '@nestjs/common';
import { Validation } from '@app/contracts';
import { invalidFields, ProblemException } from '@app/observability';

/**
 * A pipe that validates a body with a schema from the served document; 422 names each bad field. An
 * `optional` body may be left out, and is then `{}`.
 */
export function validatedBody<T>(
  validate: (body: unknown) => Validation<T>,
  { optional = false } = {},
): PipeTransform<unknown, T> {
  return {
    transform(body: unknown): T {
      if (body === undefined && optional) body = {};
      if (body === undefined) throw ProblemException.of('malformedJson', 'The body is empty; send a JSON object');
      const result = validate(body);
      if (result.ok) return result.value;
      throw invalidFields(result.errors);
    },
  };
}
