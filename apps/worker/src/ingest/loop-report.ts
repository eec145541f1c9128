import { Logger } from '@nestjs/common';
import { SuppressedEvent } from '@app/delivery';
import { WorkerMetrics } from '../metrics/worker-metrics';

const EVERY_MS = 10_000;

/**
 * Tells an operator that a subscription loop was cut: a metric for every event stored but not delivered
 * again, and a warning at most every 10 s (a loop runs hundreds of rounds a second; one line each would flood
 * the log) naming an example and where to look.
 */
export class LoopReport {
  private readonly logger = new Logger('SubscriptionLoop');
  private lastLine = 0;
  private unreported = 0;

  constructor(
    private readonly metrics: WorkerMetrics,
    private readonly maxHops: number,
  ) {}

  record(suppressed: SuppressedEvent[], now = Date.now()) {
    if (suppressed.length === 0) return;
    this.metrics.loopsCut.inc(suppressed.length);
    this.unreported += suppressed.length;
    if (now - this.lastLine < EVERY_MS) return;
    const e = suppressed[0];
    this.logger.warn(
      `subscription loop cut: ${this.unreported} event(s) had been through ${this.maxHops}+ deliveries and were stored but not ` +
        `delivered again (e.g. plant ${e.plantId}, event ${e.eventId}, ${e.hops} hops, started by event ${e.originEventId}). ` +
        `Look for a subscription whose URL leads back to a Plant Store's /plant/webhook.`,
    );
    this.lastLine = now;
    this.unreported = 0;
  }
}
