/**
 * What PostgreSQL cannot hold exactly. A plant's name and tag go to `text` columns and everything else it
 * carries to a `jsonb` column: neither takes a NUL character (jsonb refuses `\u0000` in any string, keys
 * included, at any depth), and a lone UTF-16 surrogate (valid in a JSON string escape, but not Unicode text)
 * is refused by jsonb and replaced by U+FFFD in text. Refused at the edge, so that a 200 means the plant is
 * stored, exactly as sent.
 */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u; // with the u flag, paired surrogates are one code point: not matched
// eslint-disable-next-line no-control-regex -- the same, every occurrence
const UNSTORABLES = /[\u0000\uD800-\uDFFF]/gu;
export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL (\\u0000) or an unpaired surrogate (\\uD800-\\uDFFF)';
export const UNSTORABLE_KEY_MESSAGE =
  'is a property name with NUL (\\u0000) or an unpaired surrogate (\\uD800-\\uDFFF) in it: rename the property';

export const isStorableText = (s: string): boolean => !UNSTORABLE.test(s);

/**
 * Text that may carry what PostgreSQL refuses (a field name made of a hostile key, a Kafka header of any bytes)
 * made storable and printable: each NUL or unpaired surrogate written as its `\uXXXX` escape. Used wherever
 * such text goes on to a log, a problem, a dead-letter reason or a column.
 */
export const toStorableText = (s: string): string =>
  isStorableText(s) ? s : s.replace(UNSTORABLES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** One string (a value, or a property name when `key`) PostgreSQL would refuse or alter, by its path. */
export interface UnstorableText {
  path: string[];
  key: boolean;
}

/**
 * Every string in a parsed JSON value, property names included, that PostgreSQL would refuse or alter, each
 * with its path, in document order. Iterative: an event consumed from Kafka has had no depth limit applied.
 */
export function unstorableTexts(value: unknown): UnstorableText[] {
  if (!holdsUnstorableText(value)) return []; // nearly every body: no path objects, no entry arrays
  const found: UnstorableText[] = [];
  // Each step links to its parent rather than copying the path: a path is built only for what is found.
  type Step = { value: unknown; key: string; parent: Step | null; isKey?: boolean };
  const pathOf = (step: Step) => {
    const path: string[] = [];
    for (let s: Step | null = step; s?.parent; s = s.parent) path.push(s.key);
    return path.reverse();
  };
  const pending: Step[] = [{ value, key: '', parent: null }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    const v = step.value;
    if (step.isKey || (typeof v === 'string' && !isStorableText(v)))
      found.push({ path: pathOf(step), key: !!step.isKey });
    else if (v !== null && typeof v === 'object') {
      const entries = Array.isArray(v) ? v.map((item, i) => [String(i), item] as const) : Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i];
        const child: Step = { value: item, key, parent: step };
        pending.push(child);
        // Pushed last, so popped first: a bad property name is reported before its value.
        if (!Array.isArray(v) && !isStorableText(key)) pending.push({ ...child, isKey: true });
      }
    }
  }
  return found;
}

/**
 * A path as the 422s name fields: JSON-pointer segments (`~` and `/` escaped) joined by dots; '' is the body. A
 * key PostgreSQL refuses is named by its escape (`no\u0000te`): the name goes on to logs and dead-letter reasons.
 */
export const fieldName = (path: string[]): string =>
  toStorableText(path.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('.'));

/** JSON for a jsonb column, every string in it (property names too) made storable by toStorableText. */
export function toStorableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [toStorableText(k), x]))
      : typeof v === 'string'
        ? toStorableText(v)
        : v,
  );
}

/**
 * Whether any string in the value, property names included, is one unstorableTexts reports: the same walk
 * (iterative, own enumerable keys), allocating nothing per value. Every webhook is checked twice (the schema's
 * `storable` keyword, then the body's check), and the full walk's entry arrays were 2 % of the gateway's garbage.
 */
function holdsUnstorableText(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (!isStorableText(v)) return true;
    } else if (Array.isArray(v)) {
      for (const item of v) pending.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
        if (!isStorableText(key)) return true;
        pending.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}
