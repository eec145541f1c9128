// When a subscriber's deliveries may be sent: its own limits (maxDeliveriesPerSecond, maxConcurrency) split
// between the worker replicas, a pause it asked for (429/503 with Retry-After), and its circuit breaker. The rules
// here are pure; the worker's SubscriberGates applies them, and libs/persistence/src/subscriber-health stores the
// state every replica shares.
import { DeliveryAttempt } from './domain/delivery';
import { attemptSucceeded } from './outcome';

export type CircuitState = 'closed' | 'open' | 'half_open';

/**
 * What every replica knows of a subscriber that is limited or not healthy (the others go as fast as the worker's
 * own bounds allow). Times are in milliseconds from when the snapshot was read, by the database's clock, so a
 * replica's clock skew does not move them.
 */
export interface SubscriberGate {
  subscriptionId: string;
  maxDeliveriesPerSecond: number | null;
  maxConcurrency: number | null;
  /** How long it stays paused (a Retry-After it sent), or null. */
  pausedForMs: number | null;
  circuit: CircuitState;
  /** Open: when the next probe may be sent; half-open: when the probe's holder loses it. Null when closed. */
  probeInMs: number | null;
  consecutiveFailures: number;
}

/** A subscriber's state changed: recorded durably (its row and an audit event) by the statement that changed it. */
export interface HealthTransition {
  subscriptionId: string;
  kind: 'paused' | 'circuit_opened' | 'circuit_closed' | 'probe_failed' | 'disabled';
  /** Paused or probe failed: for how long, ms. */
  forMs?: number;
  reason?: string | null;
}

/** One batch's outcomes for one subscriber, in the order they were answered, folded (see summarizeOutcomes). */
export interface OutcomeSummary {
  subscriptionId: string;
  /** A delivery succeeded in this batch: the failures before it no longer count. */
  succeeded: boolean;
  /** Failures after the last success of the batch (all of them if none succeeded). */
  failures: number;
  /** What the last of those failures was, or null. */
  lastError: string | null;
}

/** The breaker's settings (DELIVERY_CIRCUIT_*, DELIVERY_DISABLE_AFTER). */
export interface BreakerPolicy {
  failuresToOpen: number;
  probeMinMs: number;
  probeMaxMs: number;
  disableAfterMs: number;
}

/**
 * A 429 or 503 with Retry-After pauses the whole subscriber, for as long as it asked, at most `maxMs`. Null for
 * anything else (and for a Retry-After of 0: nothing to wait for).
 */
export function pauseAsked(
  result: { status: number | null; retryAfterMs: number | null },
  maxMs: number,
): number | null {
  if (result.status !== 429 && result.status !== 503) return null;
  if (result.retryAfterMs === null || result.retryAfterMs <= 0) return null;
  return Math.min(result.retryAfterMs, maxMs);
}

/**
 * Whether an attempt counts against the breaker: anything but a 2xx, a pause the subscriber asked for too. A
 * 429/503 with Retry-After is honoured (pauseAsked), but it is not a success: a subscriber that only ever asks to
 * wait would otherwise keep its circuit closed, never be auto-disabled and pile up rows for good (issue 36). One
 * success between pauses resets the count, so a receiver that rate-limits now and then is not penalised.
 */
export function isBreakerFailure(result: {
  status: number | null;
  retryAfterMs: number | null;
  error?: string | null;
}): boolean {
  return !attemptSucceeded(result);
}

/** What a failure was, short: for the circuit's `lastError`. */
export const failureText = (a: Pick<DeliveryAttempt, 'status' | 'error'>): string =>
  a.status !== null ? `HTTP ${a.status}` : (a.error ?? 'no answer');

/** An answered attempt, as the breaker sees it. */
export interface AnsweredAttempt {
  subscriptionId: string;
  status: number | null;
  retryAfterMs: number | null;
  error: string | null;
}

/**
 * Folds a batch of answered attempts into one summary per subscriber. Order matters: failures only count while
 * consecutive, so a success resets what came before it.
 */
export function summarizeOutcomes(attempts: AnsweredAttempt[]): OutcomeSummary[] {
  const by = new Map<string, OutcomeSummary>();
  for (const a of attempts) {
    const s = by.get(a.subscriptionId) ?? {
      subscriptionId: a.subscriptionId,
      succeeded: false,
      failures: 0,
      lastError: null,
    };
    if (attemptSucceeded(a)) {
      s.succeeded = true;
      s.failures = 0;
      s.lastError = null;
    } else if (isBreakerFailure(a)) {
      s.failures++;
      s.lastError = failureText(a);
    }
    by.set(a.subscriptionId, s);
  }
  return [...by.values()].filter((s) => s.succeeded || s.failures > 0);
}

/** How long an open circuit waits before its `probes + 1`th probe: doubling from min, at most max. */
export function probeDelay(probes: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(probes, 30));
}

/**
 * This replica's part of a subscriber's maxConcurrency: the limit split between the live replicas, the remainder
 * to the first ones by id, so the parts add up to the limit exactly. A replica whose part is 0 sends it nothing.
 */
export function concurrencyShare(limit: number, replicas: number, rank: number): number {
  const n = Math.max(1, replicas);
  const r = Math.min(Math.max(0, rank), n - 1);
  return Math.floor(limit / n) + (r < limit % n ? 1 : 0);
}

/** This replica's part of a subscriber's maxDeliveriesPerSecond: an even split (a fraction is fine). */
export const rateShare = (limit: number, replicas: number): number => limit / Math.max(1, replicas);

/**
 * A token bucket: `rate` tokens a second, holding at most `burst` (a tenth of a second's worth, one at least), so
 * a subscriber is paced rather than sent a second's worth at once.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private rate: number,
    now: number,
  ) {
    this.tokens = this.burst();
    this.last = now;
  }

  private burst() {
    return Math.max(1, this.rate / 10);
  }

  /** Changes the rate (the limit or the number of replicas changed), keeping what is stored up to the new burst. */
  setRate(rate: number, now: number) {
    if (rate === this.rate) return;
    this.refill(now);
    this.rate = rate;
    this.tokens = Math.min(this.tokens, this.burst());
  }

  private refill(now: number) {
    this.tokens = Math.min(this.burst(), this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
  }

  /** Takes a token if there is one. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until a token is there, ms (0: now). */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }
}
