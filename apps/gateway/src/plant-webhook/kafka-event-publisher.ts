import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ClientKafka } from '@nestjs/microservices';
import { Message, Producer } from 'kafkajs';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import {
  BatchingPublisher,
  boundedProducerConfig,
  explainKafkaError,
  KafkaAccessError,
  kafkaClientConfig,
  partitionLanes,
  topicSpecs,
  topicSettingsFrom,
} from '@app/kafka';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { EventPublisher } from './event-publisher';

/**
 * Publishes through @nestjs/microservices' ClientKafka in producer-only mode (no consumer group), batching
 * concurrent webhooks into one acks=all produce request. Closed only after the HTTP server has drained
 * (onApplicationShutdown runs after Nest closed the server), and after every queued record was acknowledged.
 */
@Injectable()
export class KafkaEventPublisher implements EventPublisher, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(KafkaEventPublisher.name);
  private readonly client: ClientKafka;
  private batcher: BatchingPublisher | null = null;
  private connected = false;
  /** A refusal only an operator can end (a revoked ACL, a rotated password), until a publish succeeds again. */
  private refused: string | null = null;
  private readonly bounds: ReturnType<typeof boundedProducerConfig>;
  /** Partitions of each topic the gateway publishes to. */
  private readonly partitions: Map<string, number>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
    private readonly metrics: GatewayMetrics,
  ) {
    this.bounds = boundedProducerConfig(config.PUBLISH_TIMEOUT_MS);
    this.partitions = new Map(topicSpecs(topicSettingsFrom(config)).map((t) => [t.topic, t.numPartitions ?? 1]));
    this.client = new ClientKafka({
      client: { ...kafkaClientConfig(config, 'plant-store-gateway'), ...this.bounds.client },
      // kafkajs bounds the requests in flight per broker connection: at 1, the lanes (one per partition) that a
      // broker leads waited for each other's acks=all, one produce request at a time for the whole broker. The
      // lanes already keep one request in flight per partition, which is what per-partition order needs, so
      // every lane may have its request out at once (bench:gateway: p99 and throughput in docs/benchmarks.md).
      producer: { ...this.bounds.producer, maxInFlightRequests: [...this.partitions.values()].reduce((a, b) => a + b) },
      producerOnlyMode: true,
      postfixId: '',
    });
  }

  async onModuleInit() {
    const producer: Producer = await this.client.connect().catch((err: unknown) => {
      throw explainKafkaError(err, this.config);
    });
    producer.on(producer.events.CONNECT, () => (this.connected = true));
    producer.on(producer.events.DISCONNECT, () => (this.connected = false));
    this.connected = true;
    // One lane per partition: a frozen broker holds up only the partitions it leads.
    const partitions = this.partitions;
    this.batcher = new BatchingPublisher(
      producer,
      1000,
      { onBatch: (size) => this.metrics.produceBatchSize.observe(size) },
      { laneOf: partitionLanes((topic) => partitions.get(topic)), ackTimeoutMs: this.bounds.ackTimeoutMs },
    );
    this.logger.log(`producer connected to ${this.config.KAFKA_BROKERS.join(',')}`);
  }

  notReady(): string | null {
    if (!this.connected || this.batcher === null) return 'The Kafka producer is not connected';
    return this.refused;
  }

  publish(topic: string, message: Message, timeoutMs: number): Promise<void> {
    if (!this.batcher) return Promise.reject(new Error('producer not connected'));
    return this.batcher.publish(topic, message, timeoutMs).then(
      () => {
        this.refused = null;
      },
      (err: unknown) => {
        this.noteRefusal(err, topic);
        throw err;
      },
    );
  }

  /**
   * Start-up proved the credentials and the WRITE ACL; both can be taken away later. Readiness then fails with
   * the cause (a load balancer stops sending webhooks that could only be refused), logged once per cause.
   */
  private noteRefusal(err: unknown, topic: string) {
    const explained = explainKafkaError(err, this.config, { operation: 'WRITE', resource: 'TOPIC', name: topic });
    if (!(explained instanceof KafkaAccessError)) return;
    if (this.refused !== explained.message) this.logger.error(explained.message);
    this.refused = explained.message;
  }

  async onApplicationShutdown() {
    this.connected = false;
    await this.batcher?.drain();
    await this.client.close();
    this.logger.log('producer flushed and closed');
  }
}
