/**
 * The number literals of a JSON text that a JavaScript number (an IEEE 754 double) cannot carry exactly, each
 * by its path: 9007199254740993 (read as ...992), 0.1000000000000000000001 (read as 0.1), 1e400 (Infinity,
 * which JSON.stringify writes as null), 1e-400 (0). Everything downstream (Kafka, the worker, the jsonb column)
 * sees the parsed value, so such a number would be stored other than as sent: the gateway refuses it (422
 * naming the path, as it refuses an id beyond 2^53 - 1), and the worker dead-letters an event carrying one.
 *
 * A literal is exact when its decimal value equals that of the double it parses to, written in its shortest
 * round-trip form (what JSON.stringify and jsonb then keep): so 0.1, 1.50, 1e21 and -0 are exact; only real
 * rounding is refused. `text` must already be valid JSON (it is scanned after it parsed).
 */
export function inexactNumbers(text: string): string[][] {
  const found: string[][] = [];
  if (!POSSIBLY_INEXACT.test(text)) return found; // the usual case: no literal long enough to lose anything
  const frames: { array: boolean; key: string; index: number }[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      STRING.lastIndex = i;
      STRING.exec(text);
      const top = frames[frames.length - 1];
      if (expectKey && top && !top.array) {
        top.key = JSON.parse(text.slice(i, STRING.lastIndex)) as string;
        expectKey = false;
      }
      i = STRING.lastIndex;
      continue;
    }
    if (c === MINUS || (c >= ZERO && c <= NINE)) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)![0];
      if (!isExact(literal)) found.push(frames.map((f) => (f.array ? String(f.index) : f.key)));
      i += literal.length;
      continue;
    }
    if (c === 0x7b /* { */) {
      frames.push({ array: false, key: '', index: 0 });
      expectKey = true;
    } else if (c === 0x5b /* [ */) frames.push({ array: true, key: '', index: 0 });
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) frames.pop();
    else if (c === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top.array) top.index++;
      else expectKey = true;
    }
    i++;
  }
  return found;
}

export const INEXACT_NUMBER_MESSAGE =
  'cannot be carried exactly as a JSON number (an IEEE 754 double would round it): send it as a string';

/** Whether a JSON number literal survives parsing into a double unchanged in value. */
export function isExact(literal: string): boolean {
  const parsed = Number(literal);
  return Number.isFinite(parsed) && decimal(literal) === decimal(String(parsed));
}

const QUOTE = 0x22;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const STRING = /"(?:[^"\\]|\\.)*"/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// Any decimal of at most 15 significant digits within the normal range round-trips through a double (DBL_DIG):
// only 16 digits or more (a dot may sit among them), or an exponent, can lose something. (Digits inside strings match too: then we scan.)
const POSSIBLY_INEXACT = /(?:\d\.?){16}|\d[eE]/;

/** A decimal literal as sign, significant digits and exponent, so that equal values compare equal. */
function decimal(literal: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return literal; // 'Infinity', 'NaN': never equal to a literal
  const [, sign, int, frac = '', exp = '0'] = m;
  const digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return '0'; // -0 is 0: jsonb's numeric has no negative zero
  const significant = digits.replace(/0+$/, '');
  return `${sign}${significant}e${BigInt(exp) - BigInt(frac.length) + BigInt(digits.length - significant.length)}`;
}
