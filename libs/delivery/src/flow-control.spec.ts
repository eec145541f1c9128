import {
  concurrencyShare,
  isBreakerFailure,
  pauseAsked,
  probeDelay,
  rateShare,
  summarizeOutcomes,
  TokenBucket,
} from './flow-control';

describe('flow control', () => {
  it('pauses on a 429 or 503 with Retry-After, bounded; nothing else pauses', () => {
    expect(pauseAsked({ status: 429, retryAfterMs: 2000 }, 3_600_000)).toBe(2000);
    expect(pauseAsked({ status: 503, retryAfterMs: 86_400_000 }, 3_600_000)).toBe(3_600_000);
    expect(pauseAsked({ status: 429, retryAfterMs: null }, 3_600_000)).toBeNull();
    expect(pauseAsked({ status: 429, retryAfterMs: 0 }, 3_600_000)).toBeNull();
    expect(pauseAsked({ status: 500, retryAfterMs: 2000 }, 3_600_000)).toBeNull();
  });

  it('counts against the breaker what is not a 2xx, a pause asked for too', () => {
    expect(isBreakerFailure({ status: 204, retryAfterMs: null })).toBe(false);
    expect(isBreakerFailure({ status: 429, retryAfterMs: 1000 })).toBe(true); // honoured, but not a success
    expect(isBreakerFailure({ status: 503, retryAfterMs: 1000 })).toBe(true);
    expect(isBreakerFailure({ status: 429, retryAfterMs: null })).toBe(true);
    expect(isBreakerFailure({ status: 500, retryAfterMs: null })).toBe(true);
    expect(isBreakerFailure({ status: null, retryAfterMs: null })).toBe(true);
  });

  it('folds a batch per subscriber: a success resets the failures before it', () => {
    const a = (subscriptionId: string, status: number | null, error: string | null = null) => ({
      subscriptionId,
      status,
      retryAfterMs: null,
      error,
    });
    expect(
      summarizeOutcomes([
        a('s1', 500),
        a('s1', 200),
        a('s1', null, 'timeout'),
        a('s2', 500),
        a('s2', 502),
        a('s3', 204),
      ]),
    ).toEqual([
      { subscriptionId: 's1', succeeded: true, failures: 1, lastError: 'timeout' },
      { subscriptionId: 's2', succeeded: false, failures: 2, lastError: 'HTTP 502' },
      { subscriptionId: 's3', succeeded: true, failures: 0, lastError: null },
    ]);
    // A pause asked for counts as a failure too (honoured, but not a success).
    expect(summarizeOutcomes([{ subscriptionId: 's1', status: 429, retryAfterMs: 1000, error: null }])).toEqual([
      { subscriptionId: 's1', succeeded: false, failures: 1, lastError: 'HTTP 429' },
    ]);
  });

  it('doubles the wait between probes up to the longest', () => {
    expect([0, 1, 2, 3, 10, 100].map((n) => probeDelay(n, 10_000, 60_000))).toEqual([
      10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('splits maxConcurrency between replicas so the parts add up to the limit', () => {
    for (const [limit, n] of [
      [5, 2],
      [1, 3],
      [7, 7],
      [10, 3],
    ]) {
      const parts = Array.from({ length: n }, (_, rank) => concurrencyShare(limit, n, rank));
      expect(parts.reduce((x, y) => x + y, 0)).toBe(limit);
      expect(Math.max(...parts) - Math.min(...parts)).toBeLessThanOrEqual(1);
    }
    expect(concurrencyShare(1, 3, 2)).toBe(0);
    expect(rateShare(10, 4)).toBe(2.5);
  });

  it('paces with a token bucket of a tenth of a second', () => {
    const b = new TokenBucket(20, 0);
    expect(b.take(0)).toBe(true);
    expect(b.take(0)).toBe(true);
    expect(b.take(0)).toBe(false);
    expect(b.waitMs(0)).toBe(50);
    expect(b.take(49)).toBe(false);
    expect(b.take(50)).toBe(true);
    const slow = new TokenBucket(0.5, 0);
    expect(slow.take(0)).toBe(true);
    expect(slow.waitMs(0)).toBe(2000);
    slow.setRate(1, 1000);
    expect(slow.take(1000)).toBe(false);
    expect(slow.take(1500)).toBe(true);
  });
});
