import { ServerKafka, KafkaOptions } from '@nestjs/microservices';
import { Consumer, EachBatchPayload } from 'kafkajs';
import { isObservable, lastValueFrom } from 'rxjs';
import { PlantBatch } from './plant-batch';

/** What the health endpoint reads: is this worker a live member of its consumer group? */
export class ConsumerState {
  consuming = false;
  lastError: string | null = null;
}

/**
 * Nest's Kafka transport (ServerKafka) with two changes, both from the pitfalls we hit with the stock one:
 * - `eachBatch` with manual commits instead of `eachMessage` with auto-commit: an offset is committed only
 *   after the handler has stored its effects, never because a handler returned or a filter swallowed an error;
 * - it subscribes from the beginning, so a new group reads what the gateway wrote before it joined.
 * Everything else (client, producer, handler discovery, group id with its `-server` suffix) is Nest's.
 */
export class PlantBatchServer extends ServerKafka {
  constructor(
    options: NonNullable<KafkaOptions['options']>,
    private readonly state: ConsumerState,
    private readonly partitionsConcurrently: number,
    private readonly commitIntervalMs = 1000,
  ) {
    super(options);
  }

  private readonly resolved = new Map<string, { topic: string; partition: number; offset: string }>();

  /** Commits every stored-but-uncommitted offset, then lets Nest stop the consumer and the producer. */
  async close() {
    if (this.consumer && this.resolved.size > 0) {
      await this.consumer.commitOffsets([...this.resolved.values()]).catch(() => undefined);
    }
    await super.close();
  }

  async bindEvents(consumer: Consumer) {
    consumer.on(consumer.events.GROUP_JOIN, () => (this.state.consuming = true));
    consumer.on(consumer.events.CRASH, (e) => {
      this.state.consuming = false;
      this.state.lastError = String(e.payload.error?.message ?? e.payload.error);
    });
    consumer.on(consumer.events.STOP, () => (this.state.consuming = false));
    consumer.on(consumer.events.DISCONNECT, () => (this.state.consuming = false));

    await consumer.subscribe({ topics: [...this.messageHandlers.keys()], fromBeginning: true });
    await consumer.run({
      // We resolve offsets ourselves, only after a batch is stored, and commit what is resolved at most once a
      // second (plus on shutdown and rebalance): a commit per small batch would cost a broker round trip each.
      autoCommit: false,
      autoCommitInterval: this.commitIntervalMs,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.partitionsConcurrently,
      eachBatch: (payload) => this.handleBatch(consumer, payload),
    });
  }

  private async handleBatch(consumer: Consumer, payload: EachBatchPayload) {
    const { batch } = payload;
    const handler = this.getHandlerByPattern(batch.topic);
    // A subscribed topic without a handler must not be committed past (stock Nest logs and commits).
    if (!handler) throw new Error(`no handler for topic ${batch.topic}`);
    const plantBatch: PlantBatch = {
      topic: batch.topic,
      partition: batch.partition,
      messages: batch.messages,
      highWatermark: batch.highWatermark,
      heartbeat: payload.heartbeat,
      shouldContinue: () => payload.isRunning() && !payload.isStale(),
      commit: async (lastOffset) => {
        payload.resolveOffset(lastOffset);
        const next = { topic: batch.topic, partition: batch.partition, offset: (BigInt(lastOffset) + 1n).toString() };
        this.resolved.set(`${batch.topic}:${batch.partition}`, next);
        // Stopping or losing the partition: commit now, while we are still a member of the group.
        if (!payload.isRunning() || payload.isStale()) await consumer.commitOffsets([next]);
        else await payload.commitOffsetsIfNecessary();
      },
      producer: this.producer!,
    };
    const result = await handler(plantBatch);
    if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
  }
}
