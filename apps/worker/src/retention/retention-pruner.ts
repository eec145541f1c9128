import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { PrunedTable, RetentionRepository } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';

/** Most batches one sweep deletes per table: a backlog is worked off over several sweeps, not in one burst. */
const MAX_BATCHES_PER_SWEEP = 50;
/** Pause between batches, so ingest and delivery always find a free connection and an unloaded disk. */
const PAUSE_BETWEEN_BATCHES_MS = 20;
/**
 * An event's outbox row outlives its deliveries by this much: a delivery that succeeded at once reads its body there,
 * and the log keeps a day's partition until the whole day is past DELIVERY_RETENTION (up to a day more), plus an hour.
 */
const OUTBOX_EVENT_MARGIN_MS = 25 * 3_600_000;
/** The delivery log's partitions are made this many days ahead: a week of sweeps that fail before one is missing. */
const LOG_DAYS_AHEAD = 7;

/**
 * Keeps the per-event tables from growing forever. Every RETENTION_SWEEP_MS (and once at start-up, for the log) it
 * drops the delivery log's days that ended more than DELIVERY_RETENTION ago, whole partitions, and makes the
 * coming week's; then it deletes, in batches of RETENTION_BATCH_SIZE, the event ids remembered longer than
 * PROCESSED_EVENTS_RETENTION and the finished mutable deliveries (with their attempt logs) older than
 * DELIVERY_RETENTION. Every replica sweeps; one at a time maintains the log, SKIP LOCKED keeps the deletes (and
 * ingest) out of each other's way, and a sweep that fails is logged and tried again next time.
 */
@Injectable()
export class RetentionPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionPruner.name);
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private starting: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly retention: RetentionRepository,
    private readonly metrics: WorkerMetrics,
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
  ) {}

  onApplicationBootstrap() {
    // Before the first sweep: the migration made a week of partitions, but a worker may start long after it.
    this.starting = this.maintainLog(Date.now());
    this.timer = setInterval(() => void this.sweep(), this.config.RETENTION_SWEEP_MS);
    this.timer.unref();
  }

  async onApplicationShutdown() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([this.starting, this.sweeping]);
  }

  /** One pass over the tables; overlapping calls share the pass in progress. */
  sweep(now = Date.now()): Promise<void> {
    this.sweeping ??= this.pruneAll(now).finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async pruneAll(now: number) {
    await this.starting;
    await this.maintainLog(now);
    const windows: [PrunedTable, number][] = [
      ['processed_events', this.config.PROCESSED_EVENTS_RETENTION],
      ['deliveries', this.config.DELIVERY_RETENTION],
      ['outbox_events', this.config.DELIVERY_RETENTION + OUTBOX_EVENT_MARGIN_MS], // after their deliveries
      ['subscriptions', this.config.DELIVERY_RETENTION], // deleted ones, once their deliveries are gone
    ];
    for (const [table, windowMs] of windows) {
      try {
        const pruned = await this.pruneTable(table, new Date(now - windowMs));
        if (pruned > 0)
          this.logger.log(`retention: pruned ${pruned} ${table} rows older than ${windowMs / 3_600_000}h`);
      } catch (err) {
        this.logger.warn(`retention: pruning ${table} failed, will retry next sweep: ${(err as Error).message}`);
      }
    }
  }

  /** The log's partitions: the coming days' made, the days past the window dropped. */
  private async maintainLog(now: number) {
    try {
      const done = await this.retention.maintainLog(
        now,
        new Date(now - this.config.DELIVERY_RETENTION),
        LOG_DAYS_AHEAD,
      );
      if (!done) return; // another replica is at it
      if (done.made > 0) this.logger.log(`retention: made ${done.made} delivery_log partitions ahead`);
      for (const d of done.dropped) {
        this.metrics.prunedPartitions.inc({ table: 'delivery_log' });
        this.logger.log(`retention: dropped delivery_log's partition of ${d.day} (about ${d.estimatedRows} rows)`);
      }
    } catch (err) {
      this.logger.warn(
        `retention: maintaining delivery_log's partitions failed, will retry next sweep: ${(err as Error).message}`,
      );
    }
  }

  private async pruneTable(table: PrunedTable, before: Date): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP && !this.stopped; batch++) {
      const n = await this.retention.prune(table, before, this.config.RETENTION_BATCH_SIZE);
      total += n;
      this.metrics.pruned.inc({ table }, n);
      if (n < this.config.RETENTION_BATCH_SIZE) break;
      await new Promise((r) => setTimeout(r, PAUSE_BETWEEN_BATCHES_MS));
    }
    return total;
  }
}
