import { nestsDeeperThan } from './json-depth';

describe(nestsDeeperThan.name, () => {
  it('measures objects and arrays, not brackets inside strings', () => {
    expect(nestsDeeperThan('{"id":1,"name":"[[[[[[{{{{"}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[1]}}', 2)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false);
    expect(nestsDeeperThan('{"name":"quote \\" then [[[[" }', 1)).toBe(false);
  });

  it('finds a 5,000-level body without recursion', () => {
    expect(nestsDeeperThan('['.repeat(5000) + ']'.repeat(5000), 32)).toBe(true);
    expect(nestsDeeperThan(`{"id":1,"name":"x","extra":${'['.repeat(5000)}${']'.repeat(5000)}}`, 32)).toBe(true);
  });
});
