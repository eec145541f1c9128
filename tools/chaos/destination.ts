// The broker destination some scenarios add beside the HTTP receiver: a Redis stream of the suite's own Redis
// (tools/harness/brokers.ts, never the machine's), subscribed for the scenario and read back with Redis's own
// client. What it records is what the HTTP receiver records, so the audit counts both the same way.
import Redis from 'ioredis';

export class ChaosStream {
  /** webhook-id → how many times it is in the stream (more than once: a redelivery). */
  readonly acknowledged = new Map<string, number>();
  /** plant id → when it was first written to the stream (ms since epoch: Redis's entry id). */
  readonly firstDelivered = new Map<number, number>();
  private readonly redis: Redis;
  private last = '-';

  /** `base`: the Redis (redis://host:port); `key`: the stream, one per scenario. */
  constructor(
    base: string,
    readonly key: string,
  ) {
    this.redis = new Redis(base, { maxRetriesPerRequest: 1 });
    this.redis.on('error', () => undefined); // the scenario kills it; a poll while it is down fails and is retried
  }

  /** The subscription's URL. */
  get url(): string {
    const { host } = new URL(`redis://${this.redis.options.host}:${this.redis.options.port}`);
    return `redis://${host}/${this.key}`;
  }

  /** Reads what was added since the last poll. */
  async poll(): Promise<void> {
    for (;;) {
      const start = this.last === '-' ? '-' : `(${this.last}`;
      const entries = await this.redis.xrange(this.key, start, '+', 'COUNT', 1000);
      for (const [id, fields] of entries) {
        const webhookId = fields[fields.indexOf('webhook-id') + 1];
        this.acknowledged.set(webhookId, (this.acknowledged.get(webhookId) ?? 0) + 1);
        try {
          const plant = JSON.parse(fields.at(-1)!) as { id: number };
          if (!this.firstDelivered.has(plant.id)) this.firstDelivered.set(plant.id, Number(id.split('-')[0]));
        } catch {
          /* not a plant: counted by webhook-id only */
        }
        this.last = id;
      }
      if (entries.length < 1000) return;
    }
  }

  async close(): Promise<void> {
    await this.redis.del(this.key).catch(() => undefined);
    this.redis.disconnect();
  }
}
