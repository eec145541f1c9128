import {
  FieldError,
  fieldName,
  INEXACT_NUMBER_MESSAGE,
  inexactNumbers,
  UNSTORABLE_KEY_MESSAGE,
  UNSTORABLE_TEXT_MESSAGE,
  unstorableTexts,
} from '@app/contracts';

/**
 * A 200 (or 201) means what was sent is stored as sent. Two things the schemas cannot see stand in the way:
 * a number the JSON parser already rounded (only the body's text shows it), and text PostgreSQL refuses (NUL,
 * a lone surrogate) anywhere in the body, property names included. The JSON parser notes the first here, by
 * the parsed body; validatedBody asks for both, for every route with a body.
 */
const roundedByParser = new WeakMap<object, string[][]>();

/** Called by the JSON parser with the text it parsed and what it made of it. */
export function noteInexactNumbers(text: string, parsed: unknown): void {
  if (parsed === null || typeof parsed !== 'object') return; // no schema of ours takes a bare value
  const paths = inexactNumbers(text);
  if (paths.length > 0) roundedByParser.set(parsed, paths);
}

/** Fields of a parsed body that would not be stored as sent, each named by its path. */
export function notStorableAsSent(body: unknown): FieldError[] {
  const rounded = body !== null && typeof body === 'object' ? (roundedByParser.get(body) ?? []) : [];
  return [
    ...rounded.map((path) => ({ field: fieldName(path) || '(body)', message: INEXACT_NUMBER_MESSAGE })),
    ...unstorableTexts(body).map(({ path, key }) => ({
      field: fieldName(path) || '(body)',
      message: key ? UNSTORABLE_KEY_MESSAGE : UNSTORABLE_TEXT_MESSAGE,
    })),
  ];
}
