import { nextRetryDelay, parseRetryAfter, parseSchedule } from './retry-schedule';

describe('retry schedule', () => {
  const schedule = parseSchedule('0s,5s,5m,30m,2h,5h,10h,10h');

  it('parses the default schedule (Svix-like: 8 attempts over about 27 h)', () => {
    expect(schedule).toEqual([0, 5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000]);
    expect(() => parseSchedule('5s,soon')).toThrow(/soon/);
  });

  it('applies ±20 % jitter and stops after the last entry', () => {
    expect(nextRetryDelay(schedule, 2, null, () => 0)).toBe(300000 * 0.8);
    expect(nextRetryDelay(schedule, 2, null, () => 1)).toBe(300000 * 1.2);
    expect(nextRetryDelay(schedule, 8)).toBeNull();
  });

  it('honours a longer Retry-After, capped at a day', () => {
    expect(nextRetryDelay(schedule, 2, 3_600_000, () => 0.5)).toBe(3_600_000);
    expect(nextRetryDelay(schedule, 2, 1000, () => 0.5)).toBe(300000);
    expect(nextRetryDelay(schedule, 2, 10 * 86_400_000, () => 0.5)).toBe(86_400_000);
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('120')).toBe(120000);
    expect(parseRetryAfter(new Date(10_000 + 30_000).toUTCString(), 10_000)).toBe(30000);
    expect(parseRetryAfter('soon')).toBeNull();
  });
});
