import { retryAfterSeconds } from './retry-after';

describe(retryAfterSeconds.name, () => {
  it('rounds a wait up to whole seconds, never below one', () => {
    expect([0, -250, 1, 999, 1000, 1001, 29_500].map((ms) => retryAfterSeconds(ms))).toEqual([1, 1, 1, 1, 1, 2, 30]);
  });

  it('caps the seconds where the wait is only an upper bound', () => {
    expect(retryAfterSeconds(60_000, 5)).toBe(5);
    expect(retryAfterSeconds(1_200, 5)).toBe(2);
  });
});
