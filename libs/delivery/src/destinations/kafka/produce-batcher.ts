// A Kafka broker reads one request of a connection at a time, and each delivery is one message: a produce per
// message on the pool's one connection held a Kafka destination to ~1,700 messages/s on this machine, with the
// worker mostly idle (npm run bench:delivery -- --kinds kafka). So the messages published while a produce is on
// the wire wait for it and leave together in the next one, as the Java producer's linger does but without a fixed
// delay: one request per round trip, however many deliveries are waiting. A message alone leaves at once (on the
// next turn of the event loop, with whatever else that turn published).

/** One message to go, and what its sender waits on. */
interface Pending<T, R> {
  item: T;
  bytes: number;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export interface ProduceBatcherLimits {
  /** Messages in one request at most. */
  maxMessages: number;
  /**
   * Bytes in one request at most (keys, values and headers): under the broker's message.max.bytes (1 MiB by
   * default), which bounds one partition's record batch; a message over it alone goes alone, and fails alone.
   */
  maxBytes: number;
}

export const DEFAULT_LIMITS: ProduceBatcherLimits = { maxMessages: 500, maxBytes: 512 * 1024 };

/**
 * Publishes through `send`, one request in flight: `send` gets the messages in the order they were published and
 * answers one result per message, in that order, an Error for a message that failed alone; if it throws, every
 * message of that request fails with its error (the delivery core retries each on its own schedule).
 */
export class ProduceBatcher<T, R> {
  private queue: Pending<T, R>[] = [];
  private sending = false;
  private scheduled = false;

  constructor(
    private readonly send: (items: T[]) => Promise<(R | Error)[]>,
    private readonly limits: ProduceBatcherLimits = DEFAULT_LIMITS,
  ) {}

  /** Nothing waiting, nothing on the wire: the batcher can be dropped. */
  get idle(): boolean {
    return this.queue.length === 0 && !this.sending && !this.scheduled;
  }

  publish(item: T, bytes: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, bytes, resolve, reject });
      if (!this.sending && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.flush();
        });
      }
    });
  }

  /** Sends the next batch, and the one after when it is answered, until nothing waits. */
  private async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        try {
          const results = await this.send(batch.map((p) => p.item));
          batch.forEach((p, i) => {
            const r = results[i];
            if (r instanceof Error) p.reject(r);
            else p.resolve(r);
          });
        } catch (err) {
          batch.forEach((p) => p.reject(err));
        }
      }
    } finally {
      this.sending = false;
    }
  }

  /** The oldest messages that fit one request's limits (at least one, however big). */
  private take(): Pending<T, R>[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < this.limits.maxMessages) {
      bytes += this.queue[n].bytes;
      if (n > 0 && bytes > this.limits.maxBytes) break;
      n++;
    }
    return this.queue.splice(0, n);
  }
}
