import { ArgumentMetadata, PipeTransform } from '@nestjs/common';
import { parameterParser, ParsedParameter } from '@app/contracts';
import { invalidFields } from '@app/observability';

/**
 * Validates each `@Param(name, …)` / `@Query(name, …)` of an operation with the schema the served document
 * declares for that parameter (see parameterParser), converting integers; 422 names the parameter.
 *   @Get(':id') get(@Param('id', validatedParameters('getPlant')) id: number)
 */
export function validatedParameters(operationId: string): PipeTransform<string | undefined, unknown> {
  const parsers = new Map<string, (raw: string | undefined) => ParsedParameter>();
  return {
    transform(raw: string | undefined, { data: name }: ArgumentMetadata) {
      if (!name) throw new Error(`validatedParameters(${operationId}) needs a named @Param or @Query`);
      let parse = parsers.get(name);
      if (!parse) parsers.set(name, (parse = parameterParser(operationId, name)));
      const result = parse(raw);
      if (!result.ok) throw invalidFields(result.errors);
      return result.value;
    },
  };
}
