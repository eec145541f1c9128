import { AttemptOutcome } from './domain/delivery';
import { nextRetryDelay } from './retry-schedule';

/**
 * Whether an attempt delivered: an HTTP receiver's 2xx, or a broker's acknowledgment. A broker has no status: its
 * attempt is recorded with status null and what it answered as the response, and no error is its yes (an HTTP
 * attempt with no status always has an error: no answer came).
 */
export function attemptSucceeded(a: { status: number | null; error?: string | null }): boolean {
  if (a.status === null) return a.error === null; // undefined: not known to be answered
  return a.status >= 200 && a.status < 300;
}

/**
 * What an attempt means: 2xx (or a broker's acknowledgment) succeeded; 410 Gone disables the subscription (Standard Webhooks); anything
 * else, or no response, is retried on the schedule, with Retry-After honoured on 429 and 503.
 */
export function decideOutcome(
  result: { status: number | null; retryAfterMs: number | null; error?: string | null },
  attemptsMade: number,
  schedule: number[],
  random?: () => number,
): AttemptOutcome {
  const { status } = result;
  if (attemptSucceeded(result)) return { kind: 'succeeded' };
  if (status === 410) return { kind: 'failed', disableSubscription: 'the receiver answered 410 Gone' };
  const retryAfter = status === 429 || status === 503 ? result.retryAfterMs : null;
  const delayMs = nextRetryDelay(schedule, attemptsMade, retryAfter, random);
  return delayMs === null ? { kind: 'failed' } : { kind: 'retry', delayMs };
}
