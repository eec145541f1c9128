import { ServerKafka, KafkaOptions } from '@nestjs/microservices';
import { Consumer, EachBatchPayload, KafkaConfig, TopicPartitionOffset } from 'kafkajs';
import { isObservable, lastValueFrom } from 'rxjs';
import { PLANT_CREATED } from '@app/contracts';
import { ConsumerWatchdog, letGo, SeverableConsumer, severableConsumer } from '@app/kafka';
import { ConsumerState } from '../health/consumer-state';
import { IngestBatch } from './ingest-batch';

/** Which topic each handler's pattern reads (the names are configurable), where dead letters go, and how a crash reads. */
export interface TopicRouting {
  topics: Record<string, string>;
  deadLetterTopic: string;
  /** A crash kafkajs will not retry (a denied ACL), in words that name its cause. */
  explain(err: unknown, topic: string): string;
}

/**
 * Nest's Kafka transport (ServerKafka) with these changes, from the pitfalls we hit with the stock one:
 * - `eachBatch` with manual commits instead of `eachMessage` with auto-commit: an offset is committed only
 *   after the handler has stored its effects, never because a handler returned or a filter swallowed an error,
 *   and a topic without a handler is never committed past;
 * - it subscribes from the beginning, so a new group reads what the gateway wrote before it joined;
 * - topics are read under their configured names (TopicRouting), and the group's state is kept for health;
 * - each consumer has a Kafka client of its own, so that one the watchdog replaces can be cut off for good.
 * Everything else (the producer's client, handler discovery, group id with its `-server` suffix) is Nest's.
 */
export class IngestServer extends ServerKafka {
  constructor(
    options: NonNullable<KafkaOptions['options']>,
    private readonly state: ConsumerState,
    private readonly partitionsConcurrently: number,
    /** KAFKA_CONSUMER_STALL_MS: how long the consumer may show no progress before it is replaced. */
    private readonly stallMs: number,
    private readonly routing: TopicRouting,
    private readonly commitIntervalMs = 1000,
  ) {
    super(options);
    this.watchdog = new ConsumerWatchdog({
      stallMs,
      lagOf: (topic, partition) => (topic === this.topicOf(PLANT_CREATED) ? this.state.lag.get(partition) : undefined),
      rejoin: (reason) => this.rejoin(reason),
      onVerdict: (reason) => (reason ? this.state.stalled.set('ingest', reason) : this.state.stalled.delete('ingest')),
    });
  }

  /** Sees a consumer that stopped making progress (kafkajs after a coordinator move) and replaces it. */
  private readonly watchdog: ConsumerWatchdog;
  private closing = false;
  /** A crash kafkajs will not retry (a denied ACL): only an operator ends it, and a rejoin would not. */
  private stoppedForGood = false;

  /** The consumer now, with the means to cut it off (this.consumer is its consumer). */
  private current: SeverableConsumer | null = null;

  /** Offsets of stored batches not yet committed, by topic:partition. */
  private readonly uncommitted = new Map<string, TopicPartitionOffset>();
  private commitTimer: NodeJS.Timeout | null = null;
  private committing: Promise<void> | null = null;

  /** Commits every stored-but-uncommitted offset, then lets Nest stop the consumer and the producer. */
  async close() {
    this.closing = true;
    this.watchdog.stop();
    if (this.commitTimer) clearInterval(this.commitTimer);
    await this.committing;
    await this.commitUncommitted();
    await super.close();
  }

  /**
   * Commits what was stored since the last commit. Run every `commitIntervalMs` by a timer of its own, so
   * offsets are committed within that interval whether or not more records arrive (a commit that waited for
   * the next batch left an idle partition's last records uncommitted indefinitely).
   */
  private async commitUncommitted() {
    if (!this.consumer || this.uncommitted.size === 0) return;
    const snapshot = [...this.uncommitted.entries()];
    try {
      await this.consumer.commitOffsets(snapshot.map(([, o]) => o));
      for (const [k, o] of snapshot) if (this.uncommitted.get(k) === o) this.uncommitted.delete(k);
    } catch {
      // A rebalance or a broker away: kept, and tried again on the next tick (or by the new owner's replay).
    }
  }

  /** Nest's start, but the consumer from newConsumer(). */
  async start(callback: () => void) {
    this.consumer = this.newConsumer();
    this.producer = this.client!.producer(this.options.producer);
    this.registerConsumerEventListeners();
    this.registerProducerEventListeners();
    await this.consumer.connect();
    await this.producer.connect();
    await this.bindEvents(this.consumer);
    callback();
  }

  /** A consumer of the group with a client of its own (Nest's client options): see severableConsumer. */
  private newConsumer(): Consumer {
    const client: KafkaConfig = { ...this.options.client, clientId: this.clientId, brokers: this.brokers };
    this.current = severableConsumer(client, { ...this.options.consumer, groupId: this.groupId });
    return this.current.consumer;
  }

  /**
   * The watchdog's remedy for a stuck consumer: let it go (bounded: a stuck kafkajs consumer may never finish
   * stopping) and join the group with a new one, which reads from the group's committed offsets. What the old one
   * stored but did not commit is read again and applied once (event ids). Offsets it had resolved are dropped:
   * only the new member commits.
   */
  private async rejoin(reason: string) {
    const old = this.current;
    if (!old || !this.client || this.closing || this.stoppedForGood) return;
    this.state.countRejoin('ingest');
    this.state.consuming = false;
    this.logger.error(`ingest consumer stuck: ${reason}; leaving it and rejoining the group with a new consumer`);
    this.uncommitted.clear();
    await letGo(old, Math.min(this.stallMs, 10000));
    if (this.closing) return;
    const fresh = this.newConsumer();
    this.consumer = fresh;
    this.registerConsumerEventListeners();
    await fresh.connect();
    await this.bindEvents(fresh);
    this.logger.warn('ingest consumer replaced; waiting for its group assignment');
  }

  async bindEvents(consumer: Consumer) {
    this.watchdog.track(consumer);
    this.watchdog.start();
    // A consumer the watchdog replaced may still stop, disconnect or crash late (its leave is not waited for past
    // 10 s): what it says then is no longer this worker's state.
    const current = () => consumer === this.consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      if (!current()) return;
      this.state.consuming = true;
      // Partitions we no longer own are someone else's to commit now: never move their offsets from here.
      const assigned = e.payload.memberAssignment ?? {};
      for (const [k, o] of this.uncommitted)
        if (!(assigned[o.topic] ?? []).includes(o.partition)) this.uncommitted.delete(k);
    });
    this.commitTimer ??= setInterval(() => {
      if (!this.committing) this.committing = this.commitUncommitted().finally(() => (this.committing = null));
    }, this.commitIntervalMs);
    this.commitTimer.unref();
    consumer.on(consumer.events.CRASH, (e) => {
      if (!current()) return;
      this.state.consuming = false;
      this.state.lastError = e.payload.restart
        ? String(e.payload.error?.message ?? e.payload.error)
        : this.routing.explain(e.payload.error, this.topicOf(PLANT_CREATED));
      if (!e.payload.restart) {
        this.stoppedForGood = true;
        this.logger.error(`consumer stopped: ${this.state.lastError}`);
      }
    });
    consumer.on(consumer.events.STOP, () => current() && (this.state.consuming = false));
    consumer.on(consumer.events.DISCONNECT, () => current() && (this.state.consuming = false));

    await consumer.subscribe({
      topics: [...this.messageHandlers.keys()].map((p) => this.topicOf(p)),
      fromBeginning: true,
    });
    await consumer.run({
      // We resolve offsets ourselves, only after a batch is stored, and commit what is resolved once a second
      // (commitUncommitted), at once when stopping or losing a partition, and on shutdown: a commit per small
      // batch would cost a broker round trip each.
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.partitionsConcurrently,
      eachBatch: (payload) => this.handleBatch(consumer, payload),
    });
  }

  private topicOf(pattern: string): string {
    return this.routing.topics[pattern] ?? pattern;
  }

  private patternOf(topic: string): string {
    return Object.entries(this.routing.topics).find(([, t]) => t === topic)?.[0] ?? topic;
  }

  private async handleBatch(consumer: Consumer, payload: EachBatchPayload) {
    const { batch } = payload;
    const handler = this.getHandlerByPattern(this.patternOf(batch.topic));
    // A subscribed topic without a handler must not be committed past (stock Nest logs and commits).
    if (!handler) throw new Error(`no handler for topic ${batch.topic}`);
    const plantBatch: IngestBatch = {
      topic: batch.topic,
      partition: batch.partition,
      messages: batch.messages,
      heartbeat: payload.heartbeat,
      shouldContinue: () => payload.isRunning() && !payload.isStale(),
      commit: async (lastOffset) => {
        // A consumer the watchdog replaced commits nothing: the new member owns the group's offsets now.
        if (consumer !== this.consumer) return;
        payload.resolveOffset(lastOffset);
        const next = { topic: batch.topic, partition: batch.partition, offset: (BigInt(lastOffset) + 1n).toString() };
        const key = `${batch.topic}:${batch.partition}`;
        // Stopping or losing the partition: commit now, while we are still a member of the group.
        if (!payload.isRunning() || payload.isStale()) {
          await consumer.commitOffsets([next]);
          this.uncommitted.delete(key);
        } else this.uncommitted.set(key, next);
      },
      producer: this.producer!,
      deadLetterTopic: this.routing.deadLetterTopic,
    };
    const result = await handler(plantBatch);
    if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
  }
}
