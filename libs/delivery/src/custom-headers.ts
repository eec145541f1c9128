// A subscription's own headers, sent with each of its deliveries (an API key its receiver wants, a routing
// header): what may be set, and the bounds. Anything that would break the request or the webhook contract is
// refused, naming the header: the reserved names (@app/contracts' reserved-headers, where the list lives), a name or
// value a header cannot carry, and the bounds.
import { whyReservedHeader } from '@app/contracts';

/** At most this many custom headers per subscription, plain and secret together. */
export const MAX_CUSTOM_HEADERS = 20;
export const MAX_HEADER_NAME_LENGTH = 64;
export const MAX_HEADER_VALUE_LENGTH = 1024;
/**
 * Names and values together, at most: with the sender's own headers well under the 16 KiB a Node receiver
 * accepts by default (a request with more gets 431 there).
 */
export const MAX_CUSTOM_HEADERS_BYTES = 8192;

/** What a response shows in place of a secret header's value. */
export const HIDDEN_HEADER = '[secret header, not shown]';

/** An RFC 9110 field name (a token). */
const NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space and tab: no CR, LF, NUL or other control character (no header can be smuggled in). */
const VALUE = /^[\t\x20-\x7e]*$/;

export interface HeaderProblem {
  field: string;
  message: string;
}

/**
 * What is wrong with a subscription's custom headers, as they would be after a change: each problem names its
 * header (`headers.X-Foo`, `secretHeaders.X-Bar`). `hasToken`: the subscription sends `Authorization: Bearer`,
 * so a custom `authorization` would clash with it; without a token one may be set (Basic, say; secret, best).
 */
export function customHeaderProblems(
  headers: { plain: Record<string, string>; secret: Record<string, string> },
  hasToken: boolean,
): HeaderProblem[] {
  const problems: HeaderProblem[] = [];
  const seen = new Map<string, string>();
  let bytes = 0;
  const entries = [
    ...Object.entries(headers.plain).map(([n, v]) => ({ n, v, field: `headers.${n}` })),
    ...Object.entries(headers.secret).map(([n, v]) => ({ n, v, field: `secretHeaders.${n}` })),
  ];
  for (const { n, v, field } of entries) {
    const lower = n.toLowerCase();
    bytes += n.length + v.length;
    const reserved = whyReservedHeader(n);
    const problem = !NAME.test(n)
      ? "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)"
      : n.length > MAX_HEADER_NAME_LENGTH
        ? `is longer than ${MAX_HEADER_NAME_LENGTH} characters`
        : reserved
          ? `cannot be set: ${n} ${reserved}`
          : lower === 'authorization' && hasToken
            ? 'cannot be set while the subscription has a token (sent as Authorization: Bearer): remove the token first'
            : seen.has(lower)
              ? `is the same header as ${seen.get(lower)} (names are case-insensitive)`
              : !VALUE.test(v)
                ? 'has a character a header cannot carry (CR, LF or another control character): visible ASCII, space and tab only'
                : v.length > MAX_HEADER_VALUE_LENGTH
                  ? `is longer than ${MAX_HEADER_VALUE_LENGTH} characters`
                  : null;
    if (problem) problems.push({ field, message: problem });
    if (!seen.has(lower)) seen.set(lower, field);
  }
  if (entries.length > MAX_CUSTOM_HEADERS)
    problems.push({ field: 'headers', message: `${entries.length} custom headers: at most ${MAX_CUSTOM_HEADERS}` });
  else if (bytes > MAX_CUSTOM_HEADERS_BYTES)
    problems.push({
      field: 'headers',
      message: `the custom headers take ${bytes} bytes (names and values): at most ${MAX_CUSTOM_HEADERS_BYTES}`,
    });
  return problems;
}

/**
 * A change (a JSON merge patch: a value sets a header, null removes it; names compare case-insensitively, and a
 * header set in one of the two sets leaves the other) applied to the current headers.
 */
export function mergeCustomHeaders(
  current: { plain: Record<string, string>; secret: Record<string, string> },
  patch: { plain?: Record<string, string | null>; secret?: Record<string, string | null> },
): { plain: Record<string, string>; secret: Record<string, string> } {
  const next = { plain: { ...current.plain }, secret: { ...current.secret } };
  const changes = [
    ...Object.entries(patch.plain ?? {}).map(([n, v]) => ({ n, v, into: next.plain })),
    ...Object.entries(patch.secret ?? {}).map(([n, v]) => ({ n, v, into: next.secret })),
  ];
  for (const { n } of changes)
    for (const set of [next.plain, next.secret])
      for (const k of Object.keys(set)) if (k.toLowerCase() === n.toLowerCase()) delete set[k];
  for (const { n, v, into } of changes) if (v !== null) into[n] = v;
  return next;
}
