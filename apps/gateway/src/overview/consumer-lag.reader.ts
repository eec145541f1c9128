import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Admin, Kafka } from 'kafkajs';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { PLANT_CREATED_TOPIC } from '@app/contracts';
import { consumerLag, kafkaClientConfig, workerConsumerGroup } from '@app/kafka';

const FRESH_MS = 2000;
const WAIT_MS = 2000;

/**
 * The workers' consumer lag on plant.created (events accepted, not yet stored), for GET /overview. One answer
 * serves every caller for two seconds, so consoles left open cost the broker two requests every two seconds
 * at most; a broker that does not answer within two seconds gives null ("unknown"), never a stale figure or a
 * hung page.
 */
@Injectable()
export class ConsumerLagReader implements OnApplicationShutdown {
  private readonly logger = new Logger(ConsumerLagReader.name);
  private readonly admin: Admin;
  private readonly groupId: string;
  private connected: Promise<void> | null = null;
  private last: { at: number; lag: Promise<number | null> } | null = null;

  constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
    this.admin = new Kafka(kafkaClientConfig(config.KAFKA_BROKERS, 'plant-store-gateway-overview')).admin({
      retry: { retries: 0 },
    });
    this.groupId = workerConsumerGroup(config.WORKER_GROUP_ID);
  }

  lag(): Promise<number | null> {
    if (this.last && Date.now() - this.last.at < FRESH_MS) return this.last.lag;
    const lag = Promise.race([this.read(), new Promise<null>((r) => setTimeout(() => r(null), WAIT_MS).unref())]);
    this.last = { at: Date.now(), lag };
    return lag;
  }

  private async read(): Promise<number | null> {
    try {
      this.connected ??= this.admin.connect();
      await this.connected;
      return (await consumerLag(this.admin, this.groupId, PLANT_CREATED_TOPIC)).reduce((sum, p) => sum + p.lag, 0);
    } catch (err) {
      this.connected = null;
      this.logger.debug(`consumer lag not read: ${(err as Error).message}`);
      return null;
    }
  }

  async onApplicationShutdown() {
    await this.admin.disconnect().catch(() => undefined);
  }
}
