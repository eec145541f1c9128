// The fuzzer's raw material: a seeded random source (so a run re-runs from its seed), pools of strings and JSON
// values drawn by fast-check (its generators are biased towards the values that break parsers: empty, huge,
// astral, control characters), and the hand-picked edge values no random draw finds in time.
import fc from 'fast-check';

/** mulberry32: small, fast and good enough to pick among cases; the same seed gives the same run. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** One of `choices` by weight: [[weight, value], …]. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((s, [w]) => s + w, 0);
    let x = this.next() * total;
    for (const [w, v] of choices) if ((x -= w) < 0) return v;
    return choices[choices.length - 1][1];
  }

  subset<T>(items: readonly T[], p = 0.5): T[] {
    return items.filter(() => this.chance(p));
  }
}

export interface Pools {
  strings: string[];
  unicode: string[];
  json: unknown[];
}

/** Strings and JSON values from fast-check, drawn once per run from its seed. */
export function pools(seed: number): Pools {
  return {
    strings: fc.sample(fc.string({ maxLength: 40 }), { seed, numRuns: 500 }),
    unicode: fc.sample(fc.string({ unit: 'binary', maxLength: 30 }), { seed: seed + 1, numRuns: 500 }),
    json: fc.sample(fc.jsonValue({ maxDepth: 3 }), { seed: seed + 2, numRuns: 500 }),
  };
}

/**
 * A drawn value as text for a URL. String() throws for an object whose `toString` is not a function, and
 * fast-check's JSON values draw such keys ({"toString": 1}): those are written as JSON instead.
 */
export function asText(v: unknown): string {
  try {
    return String(v);
  } catch {
    return JSON.stringify(v);
  }
}

/** Text PostgreSQL cannot store as is, or that JavaScript and JSON disagree on. */
export const HOSTILE_TEXT = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ud83d\ude00',
  '\u202e',
  '\ufeff',
  '\uffff',
  '',
  ' ',
  '\\',
  '"',
  '\r\n',
  'é'.normalize('NFD'),
  '𝕏'.repeat(100),
  'a'.repeat(5000),
];

/** Numbers as JSON text: beyond int64, beyond double, negative zero, exponents. */
export const HOSTILE_NUMBERS = [
  '0',
  '-0',
  '1',
  '-1',
  '9007199254740991',
  '-9007199254740991',
  '9007199254740992',
  '-9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '123456789012345678901234567890',
  '1e400',
  '-1e400',
  '1E+308',
  '5e-324',
  '1.0',
  '1.5',
  '0.1e1',
  '1e2',
  `1${'0'.repeat(400)}`,
];

/** date-time values RFC 3339 allows, the edges included: leap seconds, year 0000 and 9999, odd offsets. */
export const VALID_DATE_TIMES = [
  '2024-05-01T12:00:00Z',
  '2024-05-01T12:00:00.123456789+02:00',
  '1970-01-01T00:00:00Z',
  '2016-12-31T23:59:60Z',
  '1998-12-31T23:59:60.5Z',
  '2016-12-31T18:59:60-05:00',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999Z',
  '2024-01-01T00:00:00-23:59',
];

/** date-time parameters: the valid edges, and out-of-range fields, far years, odd forms. */
export const DATE_TIMES = [
  ...VALID_DATE_TIMES,
  '2024-06-30T23:59:60+00:00',
  '2024-02-30T00:00:00Z',
  '2023-02-29T00:00:00Z',
  '2024-13-01T00:00:00Z',
  '2024-01-01T24:00:00Z',
  '2024-01-01T23:60:00Z',
  '0001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2024-01-01T00:00:00+25:00',
  '2024-01-01t00:00:00z',
  '2024-01-01 00:00:00Z',
  '2024-01-01',
  '2024-01-01T00:00:00',
  '1714564800',
  'now',
  '',
];

export const UUIDS = [
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '123e4567-e89b-12d3-a456-426614174000',
  '123E4567-E89B-12D3-A456-426614174000',
  '{123e4567-e89b-12d3-a456-426614174000}',
  '123e4567e89b12d3a456426614174000',
  '123e4567-e89b-12d3-a456-42661417400',
  'not-a-uuid',
];

/** Path and query values that are none of the above: traversal, encodings, huge, empty. */
export const ODD_VALUES = [
  '',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  ' 1',
  '1 ',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '%00',
  '%',
  '%ZZ',
  '%2F',
  '..',
  '%2e%2e',
  '../../etc/passwd',
  'a'.repeat(3000),
  '9'.repeat(40),
  '%F0%9F%98%80',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
];
