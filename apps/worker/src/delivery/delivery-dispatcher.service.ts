import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { AttemptRecord, ClaimedDelivery, decideOutcome, NO_LEASE, OutboxLease, parseSchedule } from '@app/delivery';
import { nestSink, RateLimitedLog } from '@app/observability';
import { OutboxRepository, WriteCoalescer } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { DeliveryInbox } from './delivery-inbox';
import { DeliverySender } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';

const CLAIM_COALESCE_MS = 5;

/**
 * Sends pending deliveries from the outbox. Every delivery is sent under a lease, so any number of worker
 * replicas share the work and a crashed worker's deliveries are picked up again once its lease runs out
 * (same webhook-id, so receivers can de-duplicate). Fresh deliveries arrive leased from this worker's
 * consumer, which wrote them (DeliveryInbox); retries, backlog and expired leases are claimed with FOR UPDATE
 * SKIP LOCKED, in batches (up to twice the concurrency ahead), because the claim query, not the HTTP, is what
 * costs most. Concurrency is bounded overall and per subscription: deliveries wait in a per-subscription
 * queue for a free slot.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnModuleDestroy, DeliveryInbox {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  /** One line per failing subscriber every 10 s, however many deliveries fail: a dead one cannot flood the log. */
  private readonly failures = new RateLimitedLog(nestSink(this.logger));
  private readonly schedule: number[];
  private readonly leaseMs: number;
  /** Deliveries this worker takes on ahead: on the wire plus queued for a slot. */
  private readonly window: number;
  private readonly inFlight = new Map<string, number>(); // requests on the wire, per subscription
  private readonly queued = new Map<string, ClaimedDelivery[]>(); // claimed, waiting for a slot
  private queuedCount = 0;
  /** Requests on the wire; a delivery whose response is being recorded no longer takes a slot. */
  private sending = 0;
  /** Answered, outcome not yet written: still in the window, so a slow database slows the intake, and memory
   * stays bounded, rather than outcomes piling up. */
  private recording = 0;
  private readonly running = new Set<Promise<void>>();
  /** Outcomes are written in batches: one statement for every attempt that finished meanwhile. */
  private readonly recorder: WriteCoalescer<AttemptRecord, void>;
  private stopped = false;
  private loop: Promise<void> | null = null;
  /** Due deliveries were left unclaimed: claim again as slots free up rather than at the next poll. */
  private backlog = true;

  constructor(
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
    private readonly deliveries: OutboxRepository,
    private readonly sender: DeliverySender,
    private readonly signal: DeliverySignal,
    private readonly metrics: WorkerMetrics,
  ) {
    this.schedule = parseSchedule(config.DELIVERY_RETRY_SCHEDULE);
    // Long enough for a short wait in the queue, the attempt and its bookkeeping; a lease outliving its
    // worker is what makes a crash safe.
    this.leaseMs = config.DELIVERY_TIMEOUT_MS + 5000;
    this.window = 2 * config.DELIVERY_CONCURRENCY;
    this.recorder = new WriteCoalescer((records) => deliveries.recordAttempts(records), 500);
    metrics.watchDispatcher(this.window, () => ({
      sending: this.sending,
      queued: this.queuedCount,
      recording: this.recording,
    }));
  }

  room(): OutboxLease {
    if (this.stopped) return NO_LEASE;
    return { limit: this.free(), skipSubscriptions: this.saturated(), leaseMs: this.leaseMs };
  }

  accept(leased: ClaimedDelivery[], leftBehind: number) {
    if (this.stopped) {
      // Stopping between room() and here: hand them back rather than let them wait for the lease to expire.
      this.deliveries.releaseLeases(leased.map((d) => d.id)).catch(() => undefined);
    } else {
      for (const d of leased) this.enqueue(d);
      this.pump();
    }
    if (leftBehind > 0) {
      this.backlog = true;
      this.signal.notify();
    }
  }

  onApplicationBootstrap() {
    this.loop = this.run();
  }

  /** Stops claiming, hands back what is queued, waits for the attempts in flight, before the pool closes. */
  async onModuleDestroy() {
    this.stopped = true;
    this.signal.notify();
    await this.loop;
    const unsent = [...this.queued.values()].flat().map((d) => d.id);
    this.queued.clear();
    this.queuedCount = 0;
    await this.deliveries.releaseLeases(unsent).catch(() => undefined); // else they wait for the lease to expire
    await Promise.allSettled([...this.running]);
  }

  private async run() {
    while (!this.stopped) {
      const want = this.free();
      let claimed: ClaimedDelivery[] = [];
      // Claim in batches: when a quarter of the window is free, or when nothing at all is under way.
      if (want >= Math.max(1, this.window / 4) || (want > 0 && this.sending + this.queuedCount === 0)) {
        try {
          const saturated = this.saturated();
          const result = await this.deliveries.claimDue(want, saturated, this.leaseMs);
          claimed = result.claimed;
          this.backlog = result.more || saturated.length > 0;
        } catch (err) {
          this.logger.warn(`claiming deliveries failed, will retry: ${(err as Error).message}`);
        }
      }
      for (const d of claimed) this.enqueue(d);
      this.pump();
      // Claimed a full batch: more may be due, go again at once. Otherwise (or with no room at all: the window
      // may be full of outcomes being written, with nothing on the wire) sleep until woken or the poll.
      if (claimed.length < want || want === 0) await this.signal.wait(this.config.DELIVERY_POLL_MS);
      // While sends are finishing, let a few milliseconds of them free their slots so that one claim query
      // serves many.
      if (this.sending > 0) await new Promise((r) => setTimeout(r, CLAIM_COALESCE_MS));
    }
  }

  private free(): number {
    return Math.max(0, this.window - this.sending - this.queuedCount - this.recording);
  }

  /** Subscriptions with a full queue are left out of the next claim, so one busy subscriber cannot hog it. */
  private saturated(): string[] {
    const cap = 2 * this.config.DELIVERY_CONCURRENCY_PER_SUBSCRIPTION;
    return [...new Set([...this.inFlight.keys(), ...this.queued.keys()])].filter(
      (id) => (this.inFlight.get(id) ?? 0) + (this.queued.get(id)?.length ?? 0) >= cap,
    );
  }

  private enqueue(d: ClaimedDelivery) {
    const q = this.queued.get(d.subscriptionId) ?? [];
    q.push(d);
    this.queued.set(d.subscriptionId, q);
    this.queuedCount++;
  }

  /** Starts queued deliveries while there are free slots overall and for their subscription. */
  private pump() {
    for (const [subscriptionId, q] of this.queued) {
      while (
        q.length > 0 &&
        this.sending < this.config.DELIVERY_CONCURRENCY &&
        (this.inFlight.get(subscriptionId) ?? 0) < this.config.DELIVERY_CONCURRENCY_PER_SUBSCRIPTION
      ) {
        this.queuedCount--;
        this.start(q.shift()!);
      }
      if (q.length === 0) this.queued.delete(subscriptionId);
    }
  }

  private start(d: ClaimedDelivery) {
    this.sending++;
    this.inFlight.set(d.subscriptionId, (this.inFlight.get(d.subscriptionId) ?? 0) + 1);
    // The slot is freed as soon as the receiver has answered; the outcome is then written in a batch. Order
    // is safe meanwhile: the plant's next delivery is claimable only once this one is recorded as done.
    const release = () => {
      this.sending--;
      const n = (this.inFlight.get(d.subscriptionId) ?? 1) - 1;
      if (n === 0) this.inFlight.delete(d.subscriptionId);
      else this.inFlight.set(d.subscriptionId, n);
      if (!this.stopped) this.pump();
      if (this.backlog) this.signal.notify();
    };
    const task = this.attempt(d, release).finally(() => {
      this.running.delete(task);
      if (this.backlog) this.signal.notify(); // a later delivery for the same plant may now be due
    });
    this.running.add(task);
  }

  private async attempt(d: ClaimedDelivery, release: () => void) {
    const labels = { subscription: d.subscriptionId };
    this.metrics.deliveries.inc({ ...labels, outcome: 'sent' });
    let result: Awaited<ReturnType<DeliverySender['send']>>;
    try {
      result = await this.sender.send(d);
    } finally {
      release();
    }
    const outcome = decideOutcome(result, d.attempts + 1, this.schedule);
    this.recording++;
    try {
      await this.recorder.add({ deliveryId: d.id, attempt: result, outcome });
    } catch (err) {
      // The lease will expire and the delivery will be sent again: at least once, never lost.
      this.logger.error(`recording attempt of delivery ${d.id} failed: ${(err as Error).message}`);
      return;
    } finally {
      this.recording--;
    }
    if (outcome.kind === 'succeeded') {
      this.metrics.deliveries.inc({ ...labels, outcome: 'succeeded' });
      this.metrics.deliveryLatency.observe(Math.max(0, Date.now() - d.eventTime.getTime()) / 1000);
    } else if (outcome.kind === 'retry') {
      this.metrics.deliveries.inc({ ...labels, outcome: 'retried' });
      this.failures.log(
        'warn',
        d.subscriptionId,
        {},
        `delivery to subscription ${d.subscriptionId} (${origin(d.url)}) failed: ${what(result)}; ` +
          `attempt ${d.attempts + 1}, next in ${Math.round(outcome.delayMs / 1000)}s`,
      );
    } else {
      this.metrics.deliveries.inc({ ...labels, outcome: 'failed' });
      this.failures.log(
        'warn',
        `${d.subscriptionId} for good`,
        {},
        `delivery ${d.id} to subscription ${d.subscriptionId} (${origin(d.url)}) failed for good after ` +
          `${d.attempts + 1} attempts: ${what(result)}` +
          (outcome.disableSubscription ? `; subscription disabled: ${outcome.disableSubscription}` : ''),
      );
    }
  }
}

/** Where a delivery went, without a path or query that may carry a subscriber's own secret. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/** What the subscriber answered, or why there was no answer. */
const what = (r: { status: number | null; error: string | null }) =>
  r.status !== null ? `HTTP ${r.status}` : (r.error ?? 'no answer');
