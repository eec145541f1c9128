import { decideOutcome } from './outcome';

describe(decideOutcome.name, () => {
  const schedule = [0, 5000, 300000];
  const half = () => 0.5;

  it.each([200, 201, 204, 299])('treats %i as success', (status) => {
    expect(decideOutcome({ status, retryAfterMs: null }, 1, schedule)).toEqual({ kind: 'succeeded' });
  });

  it('disables the subscription on 410 Gone', () => {
    expect(decideOutcome({ status: 410, retryAfterMs: null }, 1, schedule)).toEqual({
      kind: 'failed',
      disableSubscription: expect.stringContaining('410'),
    });
  });

  it.each([301, 400, 500, null])('retries %p on the schedule', (status) => {
    expect(decideOutcome({ status, retryAfterMs: null }, 1, schedule, half)).toEqual({ kind: 'retry', delayMs: 5000 });
  });

  it('honours Retry-After on 429 and 503 only', () => {
    expect(decideOutcome({ status: 429, retryAfterMs: 60000 }, 1, schedule, half)).toEqual({
      kind: 'retry',
      delayMs: 60000,
    });
    expect(decideOutcome({ status: 503, retryAfterMs: 60000 }, 1, schedule, half)).toEqual({
      kind: 'retry',
      delayMs: 60000,
    });
    expect(decideOutcome({ status: 500, retryAfterMs: 60000 }, 1, schedule, half)).toEqual({
      kind: 'retry',
      delayMs: 5000,
    });
  });

  it('fails once the schedule is exhausted', () => {
    expect(decideOutcome({ status: 500, retryAfterMs: null }, 3, schedule)).toEqual({ kind: 'failed' });
  });
});
