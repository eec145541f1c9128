import { FieldError, fieldName, INEXACT_NUMBER_MESSAGE, inexactNumbers } from '@app/contracts';

/**
 * A 200 (or 201) means what was sent is stored as sent. Two things the schemas cannot see stand in the way:
 * a number the JSON parser already rounded (only the body's text shows it), and text PostgreSQL refuses (NUL,
 * a lone surrogate) anywhere in the body, property names included. The JSON parser notes the first here, by
 * the parsed body, and validatedBody asks for it; the validators see the second.
 */
const roundedByParser = new WeakMap<object, string[][]>();

/** Called by the JSON parser with the text it parsed and what it made of it. */
export function noteInexactNumbers(text: string, parsed: unknown): void {
  if (parsed === null || typeof parsed !== 'object') return; // no schema of ours takes a bare value
  const paths = inexactNumbers(text);
  if (paths.length > 0) roundedByParser.set(parsed, paths);
}

/**
 * Fields of a parsed body whose numbers the parser rounded, each named by its path. (Text PostgreSQL refuses is
 * the validators' rule, in @app/contracts: every body's validator checks it, once.)
 */
export function roundedByTheParser(body: unknown): FieldError[] {
  const rounded = body !== null && typeof body === 'object' ? roundedByParser.get(body) : undefined;
  return (rounded ?? []).map((path) => ({ field: fieldName(path) || '(body)', message: INEXACT_NUMBER_MESSAGE }));
}
