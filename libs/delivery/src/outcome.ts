import { AttemptOutcome } from './domain/delivery';
import { nextRetryDelay } from './retry-schedule';

/**
 * What an attempt means: 2xx succeeded; 410 Gone disables the subscription (Standard Webhooks); anything
 * else, or no response, is retried on the schedule, with Retry-After honoured on 429 and 503.
 */
export function decideOutcome(
  result: { status: number | null; retryAfterMs: number | null },
  attemptsMade: number,
  schedule: number[],
  random?: () => number,
): AttemptOutcome {
  const { status } = result;
  if (status !== null && status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status === 410) return { kind: 'failed', disableSubscription: 'the receiver answered 410 Gone' };
  const retryAfter = status === 429 || status === 503 ? result.retryAfterMs : null;
  const delayMs = nextRetryDelay(schedule, attemptsMade, retryAfter, random);
  return delayMs === null ? { kind: 'failed' } : { kind: 'retry', delayMs };
}
