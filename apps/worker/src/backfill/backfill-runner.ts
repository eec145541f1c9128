import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { nestSink, RateLimitedLog } from '@app/observability';
import { BackfillRepository, HeldBackfill } from '@app/persistence';

/** How often each held backfill queues its next plants. */
const TICK_MS = 1000;
/** Backfills one worker runs at a time; the others wait for a free worker or their turn. */
const MAX_HELD = 4;
/**
 * How long a worker holds a backfill before handing it back, so that slots go round: a slow backfill (1/s for
 * hours) or four of them cannot keep a fifth subscriber's waiting. The one that waited longest is taken next; with
 * nobody waiting, the same backfill is taken again in the same tick.
 */
const SLICE_MS = 10_000;
/** A backfill's unsent deliveries are kept under this many seconds of its rate, beyond the settling wait. */
const PENDING_SECONDS = 3;

/** A backfill held here, when it last queued, and since when it is held. */
type Held = HeldBackfill & { lastTick: number; heldSince: number };

/**
 * Runs backfills (asked for through the admin API): each tick, every backfill this worker holds queues the next
 * plants in plant-id order as delivery rows of its subscriber (BackfillRepository.tick), at most its rate's worth
 * since the last tick, and never with more than a few seconds' worth unsent. The rows are sent by the dispatcher
 * like any other, through the same per-plant order, live deliveries first (it fans out events before it claims
 * rows). A backfill is held under a lease, renewed every tick, so a crashed worker's backfills are taken on by
 * another once it lapses, from the cursor the last committed tick left.
 */
@Injectable()
export class BackfillRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(BackfillRunner.name);
  private readonly failures = new RateLimitedLog(nestSink(this.logger));
  private readonly held = new Map<string, Held>();
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly backfills: BackfillRepository,
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
  ) {
    this.leaseMs = config.DELIVERY_TIMEOUT_MS + 5000;
  }

  onApplicationBootstrap() {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.tick().finally(() => (this.running = null));
    }, TICK_MS);
    this.timer.unref();
  }

  /** Before the pool closes: hands the backfills back, so another worker goes on at once rather than at the lease. */
  async onModuleDestroy() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.backfills.release([...this.held.values()]).catch(() => undefined);
    this.held.clear();
  }

  /** Hands backfills back (a slice ended, or they are paused); a failure leaves them to their lease. */
  private async handBack(backfills: Held[]) {
    if (backfills.length === 0) return;
    for (const b of backfills) this.held.delete(b.id);
    await this.backfills.release(backfills);
  }

  private async tick() {
    try {
      const token = randomUUID();
      const now = Date.now();
      await this.handBack([...this.held.values()].filter((b) => now - b.heldSince >= SLICE_MS));
      for (const b of await this.backfills.claim(MAX_HELD - this.held.size, this.leaseMs, token))
        this.held.set(b.id, { ...b, lastTick: now - TICK_MS, heldSince: now });
      for (const b of [...this.held.values()]) {
        if (this.stopped) return;
        await this.step(b);
      }
    } catch (err) {
      this.failures.log('warn', 'claim', {}, `claiming backfills failed, will retry: ${(err as Error).message}`);
    }
  }

  private async step(b: Held) {
    const now = Date.now();
    try {
      // The wait before a queued delivery is due: no ingest statement outlives DATABASE_STATEMENT_TIMEOUT_MS.
      const settleMs = this.config.DATABASE_STATEMENT_TIMEOUT_MS;
      const step = await this.backfills.tick(b, {
        elapsedMs: Math.min(now - b.lastTick, 2 * TICK_MS),
        pendingSeconds: PENDING_SECONDS,
        settleMs,
        leaseMs: this.leaseMs,
      });
      b.lastTick = now;
      if (step === null || step.state === 'completed' || step.state === 'cancelled') {
        this.held.delete(b.id);
        if (step) this.logger.log(`backfill ${b.id} ${step.state}`);
      } else if (step.paused) {
        // Its subscription is disabled: it queues nothing, so its slot goes to another (taken again once enabled).
        await this.handBack([b]);
      }
    } catch (err) {
      this.failures.log('warn', b.id, {}, `backfill ${b.id} could not go on, will retry: ${(err as Error).message}`);
    }
  }
}
