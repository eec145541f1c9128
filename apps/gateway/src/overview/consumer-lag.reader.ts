import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Admin, Kafka } from 'kafkajs';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import {
  consumerLag,
  explainKafkaError,
  kafkaClientConfig,
  KafkaAccessError,
  topicNamesFrom,
  workerConsumerGroup,
} from '@app/kafka';

const FRESH_MS = 2000;
const WAIT_MS = 2000;
const deadline = () => new Promise<null>((r) => setTimeout(() => r(null), WAIT_MS).unref());

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
  private readonly topic: string;
  /** The last denial logged: a missing ACL is said once as a warning, not on every page refresh. */
  private deniedSaid = '';
  private connected: Promise<void> | null = null;
  /** The latest answer, and when it came (null while it is still being read: callers share that read). */
  private last: { at: number | null; lag: Promise<number | null> } | null = null;
  /** A read under way, even past the deadline its callers gave up at: shutdown waits for it. */
  private reading: Promise<unknown> | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: GatewayConfig) {
    // One short retry (a coordinator lookup may need it) and requests bounded by the deadline, so that a read
    // ends within about twice the deadline, before the shutdown stops waiting for it, instead of retrying on in
    // the background (a broker that accepts and never answers would otherwise hold a request for 30 s).
    this.admin = new Kafka({
      ...kafkaClientConfig(config, 'plant-store-gateway-overview'),
      connectionTimeout: WAIT_MS,
      requestTimeout: WAIT_MS,
      retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 200 },
    }).admin();
    this.groupId = workerConsumerGroup(config.WORKER_GROUP_ID);
    this.topic = topicNamesFrom(config).plantCreated;
  }

  lag(): Promise<number | null> {
    if (this.last && (this.last.at === null || Date.now() - this.last.at < FRESH_MS)) return this.last.lag;
    // Fresh for two seconds from when the answer came, not from when it was asked: during an outage, a page
    // that refreshes gets "unknown" at once for the next two seconds instead of waiting two more.
    const entry: { at: number | null; lag: Promise<number | null> } = { at: null, lag: Promise.resolve(null) };
    this.reading ??= this.read().finally(() => (this.reading = null));
    entry.lag = Promise.race([this.reading as Promise<number | null>, deadline()]).then((lag) => {
      entry.at = Date.now();
      return lag;
    });
    this.last = entry;
    return entry.lag;
  }

  private async read(): Promise<number | null> {
    try {
      this.connected ??= this.admin.connect();
      await this.connected;
      return (await consumerLag(this.admin, this.groupId, this.topic)).reduce((sum, p) => sum + p.lag, 0);
    } catch (err) {
      this.connected = null;
      const explained = explainKafkaError(err, this.config, {
        operation: 'DESCRIBE',
        resource: 'GROUP',
        name: this.groupId,
      });
      if (explained instanceof KafkaAccessError && explained.message !== this.deniedSaid)
        this.logger.warn(`consumer lag not read: ${(this.deniedSaid = explained.message)}`);
      else this.logger.debug(`consumer lag not read: ${(err as Error).message}`);
      return null;
    }
  }

  /** Lets a read under way finish (bounded), then disconnects: nothing left running after close. */
  async onApplicationShutdown() {
    await Promise.race([this.reading, new Promise((r) => setTimeout(r, 5000).unref())]);
    await this.admin.disconnect().catch(() => undefined);
  }
}
