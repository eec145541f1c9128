import type { SendResult } from '../http/webhook-client';
import { WebhookClient } from '../http/webhook-client';
import { BrokerClient, DestinationRequest } from './broker-client';
import { connectGuard } from './connect-guard';
import { BrokerKind, ConnectBroker } from './destination';
import { DestinationPool } from './destination-pool';
import { destinationKind } from './destination-url';

/**
 * A kind's connector, loaded with its client library on its first connection: the libraries cost ~20 MB of
 * resident memory together (the AWS SDK, amqplib, mqtt, nats, ioredis), which a gateway that test-sends to no
 * broker, or a worker whose subscribers are HTTP receivers, would carry for nothing (test/gateway/body-budget
 * measures the gateway's resident set).
 */
const onFirstUse =
  (load: () => Promise<ConnectBroker>): ConnectBroker =>
  async (target, guard) =>
    (await load())(target, guard);

/** Each broker kind's way to connect: a new kind is a folder here and a line in this table. */
export const CONNECTORS: Record<BrokerKind, ConnectBroker> = {
  kafka: onFirstUse(async () => (await import('./kafka/kafka-connection')).connectKafka),
  amqp: onFirstUse(async () => (await import('./amqp/amqp-connection')).connectAmqp),
  nats: onFirstUse(async () => (await import('./nats/nats-connection')).connectNats),
  mqtt: onFirstUse(async () => (await import('./mqtt/mqtt-connection')).connectMqtt),
  redis: onFirstUse(async () => (await import('./redis/redis-connection')).connectRedis),
  sqs: onFirstUse(async () => (await import('./sqs/sqs-connection')).connectSqs),
};

export interface DestinationClientOptions {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  /** Broker connections this process keeps open at most (DESTINATION_MAX_CONNECTIONS). */
  maxConnections: number;
  /** A broker connection unused this long is closed (DESTINATION_IDLE_MS). */
  idleMs: number;
  /**
   * The longest a broker that refused a connection is not tried again (the backoff doubles from 1 s up to it; 60 s
   * unless given). A delivery meanwhile fails at once, and a breaker's probe would too, without trying: the worker
   * keeps it under its breaker's first probe interval, so that every probe tries the broker for real.
   */
  reconnectMaxMs?: number;
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
      Date.now,
      o.reconnectMaxMs,
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
