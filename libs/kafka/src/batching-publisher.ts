import { Message, Producer } from 'kafkajs';

export class PublishTimeoutError extends Error {
  constructor(readonly sent: boolean) {
    super(sent ? 'Kafka did not acknowledge in time' : 'The event waited too long to be sent');
    this.name = 'PublishTimeoutError';
  }
}

interface Pending {
  topic: string;
  message: Message;
  resolve: () => void;
  reject: (err: Error) => void;
  sent: boolean;
  settled: boolean;
}

export interface PublisherHooks {
  /** Called after each produce request with its size and how long Kafka took to acknowledge it. */
  onBatch?(size: number, seconds: number, ok: boolean): void;
}

/**
 * Coalesces concurrent publishes into one produce request (acks=all) while keeping one request in flight:
 * every caller's promise resolves only once Kafka has acknowledged the batch that holds its record. Under
 * load this turns N webhooks into a handful of requests instead of N.
 */
export class BatchingPublisher {
  private queue: Pending[] = [];
  private inFlight: Promise<void> | null = null;
  private scheduled = false;

  constructor(
    private readonly producer: Producer,
    private readonly maxBatch = 1000,
    private readonly hooks: PublisherHooks = {},
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  /**
   * Resolves once Kafka acknowledged the record. After `timeoutMs` it rejects: a record still queued is
   * withdrawn (it will never be written); one already sent may still land, which idempotency keys absorb.
   */
  publish(topic: string, message: Message, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const item: Pending = { topic, message, resolve, reject, sent: false, settled: false };
      const timer = setTimeout(() => {
        if (item.settled) return;
        item.settled = true;
        if (!item.sent) this.queue = this.queue.filter((q) => q !== item);
        reject(new PublishTimeoutError(item.sent));
      }, timeoutMs);
      item.resolve = () => {
        clearTimeout(timer);
        if (item.settled) return;
        item.settled = true;
        resolve();
      };
      item.reject = (err) => {
        clearTimeout(timer);
        if (item.settled) return;
        item.settled = true;
        reject(err);
      };
      this.queue.push(item);
      this.schedule();
    });
  }

  /** Waits until every queued record has been sent and acknowledged (or failed). */
  async drain(): Promise<void> {
    while (this.inFlight || this.queue.length > 0) {
      if (!this.inFlight) this.flush();
      await this.inFlight;
    }
  }

  private schedule() {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    // setImmediate lets every request parsed in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush() {
    if (this.inFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    batch.forEach((item) => (item.sent = true));
    const byTopic = new Map<string, Message[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic) ?? [];
      list.push(item.message);
      byTopic.set(item.topic, list);
    }
    const started = process.hrtime.bigint();
    this.inFlight = this.producer
      .sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) })
      .then(
        () => {
          this.hooks.onBatch?.(batch.length, Number(process.hrtime.bigint() - started) / 1e9, true);
          batch.forEach((item) => item.resolve());
        },
        (err: Error) => {
          this.hooks.onBatch?.(batch.length, Number(process.hrtime.bigint() - started) / 1e9, false);
          batch.forEach((item) => item.reject(err));
        },
      )
      .finally(() => {
        this.inFlight = null;
        if (this.queue.length > 0) this.schedule();
      });
  }
}
