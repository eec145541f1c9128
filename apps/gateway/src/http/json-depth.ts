/** Deepest nesting of objects and arrays a request body may have. A NewPlant is one level deep. */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether a JSON text nests objects/arrays deeper than `max`, found by one pass over the characters (strings
 * skipped) before anything parses it: a body thousands of levels deep would otherwise overflow the stack of
 * whichever recursive step meets it first (parser, validator, serializer) and surface as a server error.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash skips the escaped character.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
