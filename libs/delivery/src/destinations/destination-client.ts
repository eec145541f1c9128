import type { SendResult } from '../http/webhook-client';
import { WebhookClient } from '../http/webhook-client';
import { connectAmqp } from './amqp/amqp-connection';
import { BrokerClient, DestinationRequest } from './broker-client';
import { connectGuard } from './connect-guard';
import { BrokerKind, ConnectBroker } from './destination';
import { DestinationPool } from './destination-pool';
import { destinationKind } from './destination-url';
import { connectKafka } from './kafka/kafka-connection';
import { connectMqtt } from './mqtt/mqtt-connection';
import { connectNats } from './nats/nats-connection';
import { connectRedis } from './redis/redis-connection';
import { connectSqs } from './sqs/sqs-connection';

/** Each broker kind's way to connect: a new kind is a folder here and a line in this table. */
export const CONNECTORS: Record<BrokerKind, ConnectBroker> = {
  kafka: connectKafka,
  amqp: connectAmqp,
  nats: connectNats,
  mqtt: connectMqtt,
  redis: connectRedis,
  sqs: connectSqs,
};

export interface DestinationClientOptions {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  /** Broker connections this process keeps open at most (DESTINATION_MAX_CONNECTIONS). */
  maxConnections: number;
  /** A broker connection unused this long is closed (DESTINATION_IDLE_MS). */
  idleMs: number;
}

/**
 * Sends a New Plant wherever its subscription's URL says: an HTTP receiver through WebhookClient, a broker
 * through BrokerClient. What the worker's deliveries and the gateway's test sends both use.
 */
export class DestinationClient {
  private readonly http: WebhookClient;
  private readonly pool: DestinationPool;
  private readonly brokers: BrokerClient;

  constructor(o: DestinationClientOptions, connectors: Record<BrokerKind, ConnectBroker> = CONNECTORS) {
    this.http = new WebhookClient(o.allowPrivateNetworks, o.timeoutMs);
    this.pool = new DestinationPool(
      connectors,
      { ...connectGuard(o.allowPrivateNetworks, o.timeoutMs), tokens: this.http.tokens },
      o.maxConnections,
      o.idleMs,
    );
    this.brokers = new BrokerClient(this.pool);
  }

  send(r: DestinationRequest): Promise<SendResult> {
    const kind = destinationKind(r.url);
    return kind.ok && kind.value !== 'http' ? this.brokers.send(r) : this.http.send(r);
  }

  /** Broker connections open now (a gauge). */
  get brokerConnections(): number {
    return this.pool.size;
  }

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.pool.close()]);
  }
}
