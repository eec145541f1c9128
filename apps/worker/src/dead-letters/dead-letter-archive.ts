import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Consumer } from 'kafkajs';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import {
  ConsumerWatchdog,
  explainKafkaError,
  letGo,
  kafkaClientConfig,
  SeverableConsumer,
  severableConsumer,
  topicNamesFrom,
} from '@app/kafka';
import { DeadLetterRepository } from '@app/persistence';
import { ConsumerState } from '../health/consumer-state';
import { toArchivedDeadLetter } from './dead-letter-record';

/**
 * Copies every record of plant.created.dlq into PostgreSQL, where the admin API lists, shows, redrives and
 * discards them. Its own consumer group (`<WORKER_GROUP_ID>-dead-letters`): with several workers, each copies
 * the partitions it owns. A batch's offsets are committed only once its rows are stored, and a row already
 * stored is left as it is (unique partition and offset), so nothing is lost or doubled across restarts.
 */
@Injectable()
export class DeadLetterArchive implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeadLetterArchive.name);
  private current: SeverableConsumer;
  private readonly topic: string;
  /** Replaces a consumer that stopped making progress, as ingest's does (see ConsumerWatchdog). */
  private readonly watchdog: ConsumerWatchdog;
  private stopping = false;

  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly state: ConsumerState,
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
  ) {
    this.topic = topicNamesFrom(config).deadLetters;
    this.current = this.newConsumer();
    this.watchdog = new ConsumerWatchdog({
      stallMs: config.KAFKA_CONSUMER_STALL_MS,
      rejoin: (reason) => this.rejoin(reason),
      onVerdict: (reason) =>
        reason ? state.stalled.set('dead-letter archive', reason) : state.stalled.delete('dead-letter archive'),
    });
  }

  /** Each consumer with a client of its own, so that one let go can be cut off (see severableConsumer). */
  private newConsumer(): SeverableConsumer {
    return severableConsumer(kafkaClientConfig(this.config, 'plant-store-worker-dead-letters'), {
      groupId: `${this.config.WORKER_GROUP_ID}-dead-letters`,
      maxBytes: 4 * 1024 * 1024, // a batch of dead letters is bounded in memory
    });
  }

  private get consumer(): Consumer {
    return this.current.consumer;
  }

  async onApplicationBootstrap() {
    await this.run(this.consumer);
    this.watchdog.start();
  }

  /** The watchdog's remedy: let the stuck consumer go (bounded) and join the group with a new one. */
  private async rejoin(reason: string) {
    // A denied ACL (blocked) is only an operator's to end; a new consumer would be refused the same way.
    if (this.stopping || this.state.blocked.has('dead-letter archive')) return;
    this.state.countRejoin('dead-letter archive');
    this.logger.error(`dead-letter archive consumer stuck: ${reason}; rejoining the group with a new consumer`);
    await letGo(this.current, 10000);
    if (this.stopping) return;
    this.current = this.newConsumer();
    await this.run(this.consumer);
  }

  private async run(consumer: Consumer) {
    const group = `${this.config.WORKER_GROUP_ID}-dead-letters`;
    this.watchdog.track(consumer);
    // A crash kafkajs does not retry (a denied READ on the topic or the group) is said once, naming the ACL.
    consumer.on(consumer.events.CRASH, (e) => {
      // A consumer let go crashes once severed, and is not restarted: that is no longer this archive's state.
      if (e.payload.restart || consumer !== this.consumer) return;
      const need = /GROUP_/.test(String((e.payload.error as { type?: string }).type))
        ? { operation: 'READ' as const, resource: 'GROUP' as const, name: group }
        : { operation: 'READ' as const, resource: 'TOPIC' as const, name: this.topic };
      const why = explainKafkaError(e.payload.error, this.config, need).message;
      this.state.blocked.set('dead-letter archive', why);
      this.logger.error(`dead-letter archive stopped: ${why}`);
    });
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        if (batch.messages.length === 0) return;
        // Thrown: kafkajs retries the batch (and restarts the consumer), nothing is resolved or committed.
        const stored = await this.letters.archive(batch.messages.map((m) => toArchivedDeadLetter(batch.partition, m)));
        resolveOffset(batch.messages[batch.messages.length - 1].offset);
        await heartbeat();
        if (stored > 0)
          this.logger.log(`${stored} dead letter(s) from ${batch.topic}[${batch.partition}] kept for review`);
      },
    });
  }

  /** Before the database pool closes (an application-shutdown hook): a batch being stored finishes first. */
  async onModuleDestroy() {
    this.stopping = true;
    this.watchdog.stop();
    await this.consumer.disconnect();
  }
}
