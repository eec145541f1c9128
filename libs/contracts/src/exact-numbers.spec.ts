import { fc, test } from '@fast-check/jest';
import { inexactNumbers, isExact } from './exact-numbers';

describe('isExact', () => {
  it.each([
    '0',
    '-0',
    '0.1',
    '1.50',
    '9007199254740991',
    '9007199254740992', // 2^53 is a double
    '1e21',
    '1E+21',
    '100000000000000000000000', // 1e23 as written out: the double's value is exactly this
    '5e-324',
    '1.7976931348623157e308',
    '0.000000000000000000000000000001',
    '12345678.1234567',
  ])('keeps %s', (literal) => expect(isExact(literal)).toBe(true));

  it.each([
    '9007199254740993', // read as ...992
    '-9007199254740993',
    '123456789012345678901234567890',
    '0.1000000000000000000001',
    '12345678.123456789',
    '1e400', // Infinity, written as null
    '-1e400',
    '1e-400', // 0
    '2.5e-324', // rounds to 0
  ])('refuses %s', (literal) => expect(isExact(literal)).toBe(false));

  test.prop([fc.double({ noNaN: true, noDefaultInfinity: true })])('keeps whatever a double prints as', (d) => {
    expect(isExact(JSON.stringify(d))).toBe(true);
  });

  // Exact means what is kept is what was sent: the double's shortest printed form (what JSON.stringify and jsonb
  // write) is the literal itself. 67097516360452850 parses to ...848 yet prints as ...850: kept as sent, exact.
  test.prop([fc.bigInt({ min: 2n ** 53n + 1n, max: 10n ** 21n - 1n })])(
    'keeps an integer only when the double prints it back as sent',
    (n) => {
      expect(isExact(String(n))).toBe(String(Number(n)) === String(n));
    },
  );

  it('refuses a big integer a double holds but prints rounded: JSON.stringify and jsonb keep the printed form', () => {
    expect(String(2 ** 70)).toBe('1.1805916207174113e+21');
    expect(isExact('1180591620717411303424')).toBe(false);
    expect(isExact('1.1805916207174113e+21')).toBe(true);
  });
});

describe('inexactNumbers', () => {
  it('names the path of each rounded number, keys and indexes, at any depth', () => {
    const text =
      '{"id": 7, "name": "9007199254740993", "big": 9007199254740993, "a/b": {"x": [1, 2, 1e400, {"y~": 0.1000000000000000000001}]}}';
    expect(inexactNumbers(text)).toEqual([['big'], ['a/b', 'x', '2'], ['a/b', 'x', '3', 'y~']]);
  });

  it('finds nothing in bodies that carry only exact numbers, or big numbers inside strings', () => {
    expect(inexactNumbers('{"id":1,"name":"Ficus","n":[0.5,-3,1e21],"s":"12345678901234567890"}')).toEqual([]);
    expect(inexactNumbers('12345678901234567890')).toEqual([[]]);
  });

  it('reads keys with escapes, and strings with quotes and backslashes in them', () => {
    expect(inexactNumbers('{"a\\"b\\\\": "x\\"1e400", "k\\u00e9": 1e400}')).toEqual([['ké']]);
  });
});
