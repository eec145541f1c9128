import { parseDuration } from '@app/config';

/** Parses DELIVERY_RETRY_SCHEDULE ("0s,5s,5m,30m,2h,5h,10h,10h") into delays in milliseconds. */
export function parseSchedule(text: string): number[] {
  return text.split(',').map((part) => {
    const ms = parseDuration(part);
    if (ms === null) throw new Error(`DELIVERY_RETRY_SCHEDULE: "${part}" is not a duration like 5s, 5m or 2h`);
    return ms;
  });
}

const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * When to try again after `attemptsMade` failed attempts, or null once the schedule is exhausted. The
 * schedule's first entry is the first attempt's own delay, so n attempts have been made after entry n-1.
 * ±20 % jitter spreads retries; a receiver's Retry-After (on 429/503) wins when it asks for longer.
 */
export function nextRetryDelay(
  schedule: number[],
  attemptsMade: number,
  retryAfterMs: number | null = null,
  random: () => number = Math.random,
): number | null {
  if (attemptsMade >= schedule.length) return null;
  const base = schedule[attemptsMade];
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
