import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Admin, Kafka } from 'kafkajs';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { consumerLag, kafkaClientConfig, topicNamesFrom, workerConsumerGroup } from '@app/kafka';
import { Outbox, OUTBOX } from '@app/delivery';
import { ConsumerState } from '../health/consumer-state';
import { WorkerMetrics } from './worker-metrics';

const SAMPLE_MS = 5000;

/**
 * Samples the two backlogs every few seconds from their sources of truth: consumer lag from the broker's view
 * of the group (high watermark minus the committed offset, per partition, whatever this replica owns), and
 * pending deliveries from the database. A sample that fails sets the gauge to NaN ("unknown"), never leaving
 * the last value standing: during a database outage the lag keeps growing on the broker while nothing is
 * stored, and that is exactly when the number must be right.
 */
@Injectable()
export class BacklogMonitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BacklogMonitor.name);
  private readonly admin: Admin;
  private readonly groupId: string;
  private readonly topic: string;
  private timer: NodeJS.Timeout | null = null;
  private connected: Promise<void> | null = null;
  private sampling: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly metrics: WorkerMetrics,
    @Inject(OUTBOX) private readonly outbox: Outbox,
    @Inject(APP_CONFIG) config: WorkerConfig,
    private readonly consumers: ConsumerState,
  ) {
    metrics.watchConsumers(() => consumers.forcedRejoins);
    this.admin = new Kafka(kafkaClientConfig(config, 'plant-store-worker-monitor')).admin();
    this.groupId = workerConsumerGroup(config.WORKER_GROUP_ID);
    this.topic = topicNamesFrom(config).plantCreated;
  }

  onApplicationBootstrap() {
    this.timer = setInterval(() => this.tick(), SAMPLE_MS);
    this.timer.unref();
    this.tick();
  }

  private tick() {
    if (this.stopped || this.sampling) return;
    this.sampling = Promise.all([this.sampleLag(), this.samplePending()]).then(() => void (this.sampling = null));
  }

  private async sampleLag() {
    try {
      this.connected ??= this.admin.connect();
      await this.connected;
      for (const p of await consumerLag(this.admin, this.groupId, this.topic)) {
        this.metrics.consumerLag.set({ topic: this.topic, partition: String(p.partition) }, p.lag);
        this.consumers.lag.set(p.partition, p.lag); // the ingest watchdog: owned lag left unconsumed
      }
    } catch (err) {
      this.connected = null;
      this.metrics.consumerLag.reset();
      this.consumers.lag.clear(); // unknown is not "behind": the watchdog's other signs still hold
      this.logger.debug(`consumer lag not sampled: ${(err as Error).message}`);
    }
  }

  private async samplePending() {
    try {
      const pending = await this.outbox.countPending();
      this.metrics.deliveriesPending.set(pending.deliveries);
      this.metrics.eventsToFanOut.set(pending.events);
    } catch {
      this.metrics.deliveriesPending.set(NaN);
      this.metrics.eventsToFanOut.set(NaN);
    }
  }

  /** Stops sampling, lets a sample under way finish, then disconnects (nothing left running after close). */
  async onApplicationShutdown() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    // Bounded: a sample stuck on a broker that is away must not hold the shutdown.
    await Promise.race([this.sampling, new Promise((r) => setTimeout(r, 5000).unref())]);
    await this.admin.disconnect().catch(() => undefined);
  }
}
