import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Consumer, Kafka } from 'kafkajs';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { explainKafkaError, kafkaClientConfig, topicNamesFrom } from '@app/kafka';
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
  private readonly consumer: Consumer;
  private readonly topic: string;

  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly state: ConsumerState,
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
  ) {
    this.topic = topicNamesFrom(config).deadLetters;
    this.consumer = new Kafka(kafkaClientConfig(config, 'plant-store-worker-dead-letters')).consumer({
      groupId: `${config.WORKER_GROUP_ID}-dead-letters`,
      maxBytes: 4 * 1024 * 1024, // a batch of dead letters is bounded in memory
    });
  }

  async onApplicationBootstrap() {
    const group = `${this.config.WORKER_GROUP_ID}-dead-letters`;
    // A crash kafkajs does not retry (a denied READ on the topic or the group) is said once, naming the ACL.
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      if (e.payload.restart) return;
      const need = /GROUP_/.test(String((e.payload.error as { type?: string }).type))
        ? { operation: 'READ' as const, resource: 'GROUP' as const, name: group }
        : { operation: 'READ' as const, resource: 'TOPIC' as const, name: this.topic };
      const why = explainKafkaError(e.payload.error, this.config, need).message;
      this.state.blocked.set('dead-letter archive', why);
      this.logger.error(`dead-letter archive stopped: ${why}`);
    });
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await this.consumer.run({
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
    await this.consumer.disconnect();
  }
}
