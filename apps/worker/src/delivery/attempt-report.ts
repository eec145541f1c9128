import {
  AttemptOutcome,
  ClaimedDelivery,
  destinationKindOf,
  REDACTED,
  SendResult,
  urlOriginAndPath,
} from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { WorkerMetrics } from '../metrics/worker-metrics';

/**
 * Tells what became of a recorded attempt: the delivery counters and latency, and one log line per failing
 * subscriber every 10 s (RateLimitedLog), however many of its deliveries fail, so a dead one cannot flood the log.
 */
export function reportAttempt(
  metrics: WorkerMetrics,
  failures: RateLimitedLog,
  d: ClaimedDelivery,
  result: SendResult,
  outcome: AttemptOutcome,
) {
  const labels = { subscription: d.subscriptionId, kind: destinationKindOf(d.url) };
  if (outcome.kind === 'succeeded') {
    metrics.deliveries.inc({ ...labels, outcome: 'succeeded' });
    metrics.deliveryLatency.observe(Math.max(0, Date.now() - d.eventTime.getTime()) / 1000);
  } else if (outcome.kind === 'retry') {
    metrics.deliveries.inc({ ...labels, outcome: 'retried' });
    failures.log(
      'warn',
      d.subscriptionId,
      {},
      `delivery to subscription ${d.subscriptionId} (${origin(d.url)}) failed: ${what(result)}; ` +
        `attempt ${d.attempts + 1}, next in ${Math.round(outcome.delayMs / 1000)}s`,
    );
  } else {
    metrics.deliveries.inc({ ...labels, outcome: 'failed' });
    failures.log(
      'warn',
      `${d.subscriptionId} for good`,
      {},
      `delivery ${d.id} to subscription ${d.subscriptionId} (${origin(d.url)}) failed for good after ` +
        `${d.attempts + 1} attempts: ${what(result)}` +
        (outcome.disableSubscription ? `; subscription disabled: ${outcome.disableSubscription}` : ''),
    );
  }
}

/** Where a delivery went, without a path or query that may carry a subscriber's own secret. */
export function origin(url: string): string {
  const shown = urlOriginAndPath(url); // a broker's scheme has no URL origin, and its path is a topic
  return shown === REDACTED ? '(invalid URL)' : shown.replace(/^(https?:\/\/[^/]*).*$/, '$1');
}

/** What the subscriber answered, or why there was no answer. */
const what = (r: { status: number | null; error: string | null }) =>
  r.status !== null ? `HTTP ${r.status}` : (r.error ?? 'no answer');
