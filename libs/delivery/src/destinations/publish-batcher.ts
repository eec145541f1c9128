// A broker reads one request of a connection at a time, and each delivery is one message: a produce per message on
// the pool's one Kafka connection held a Kafka destination to ~1,700 messages/s on this machine, with the worker
// mostly idle (npm run bench:delivery -- --kinds kafka), and one SendMessage per message held SQS to ~600/s, the
// SDK's cost per request. So the messages published while a request is on the wire wait for it and leave together
// in the next one, as the Java producer's linger does but without a fixed delay: one request per round trip,
// however many deliveries are waiting. A message alone leaves at once (on the next turn of the event loop, with
// whatever else that turn published). Kafka keeps one request in flight (its connection answers them in order
// anyway); SQS, whose batches hold 10 messages, several over its pool of keep-alive sockets.

/** One message to go, and what its sender waits on. */
interface Pending<T, R> {
  item: T;
  bytes: number;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export interface PublishBatcherLimits {
  /** Messages in one request at most. */
  maxMessages: number;
  /**
   * Bytes in one request at most (keys, values and headers): under the broker's message.max.bytes (1 MiB by
   * default), which bounds one partition's record batch; a message over it alone goes alone, and fails alone.
   */
  maxBytes: number;
  /** Requests on the wire at once (1 unless said). */
  maxInFlight?: number;
  /**
   * Whether a request that failed whole is sent again one message at a time (not when the way to the broker is
   * gone): so that a message the broker refuses (too large, a policy) fails alone and its neighbours go.
   */
  splitOnFailure?: (err: unknown) => boolean;
}

export const DEFAULT_LIMITS: PublishBatcherLimits = { maxMessages: 500, maxBytes: 512 * 1024 };

/**
 * Publishes through `send`, `maxInFlight` requests at most: `send` gets the messages in the order they were
 * published and answers one result per message, in that order, an Error for a message that failed alone; if it
 * throws, every message of that request fails with its error (the delivery core retries each on its own schedule).
 */
export class PublishBatcher<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxInFlight: number;

  constructor(
    private readonly send: (items: T[]) => Promise<(R | Error)[]>,
    private readonly limits: PublishBatcherLimits = DEFAULT_LIMITS,
  ) {
    this.maxInFlight = Math.max(1, limits.maxInFlight ?? 1);
  }

  /** Nothing waiting, nothing on the wire: the batcher can be dropped. */
  get idle(): boolean {
    return this.queue.length === 0 && this.inFlight === 0 && !this.scheduled;
  }

  publish(item: T, bytes: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, bytes, resolve, reject });
      if (this.inFlight < this.maxInFlight && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Sends batches while requests may go; each answered one sends what waited meanwhile. */
  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.take();
      this.inFlight++;
      void this.sendBatch(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async sendBatch(batch: Pending<T, R>[]): Promise<void> {
    try {
      const results = await this.answers(batch.map((p) => p.item));
      batch.forEach((p, i) => {
        const r = results[i];
        if (r instanceof Error) p.reject(r);
        else p.resolve(r);
      });
    } catch (err) {
      batch.forEach((p) => p.reject(err));
    }
  }

  /** One request's answers; after a failure of the whole, each message's own, when splitOnFailure says so. */
  private async answers(items: T[]): Promise<(R | Error)[]> {
    try {
      return await this.send(items);
    } catch (err) {
      if (items.length === 1 || !this.limits.splitOnFailure?.(err)) throw err;
      return Promise.all(
        items.map((item) =>
          this.send([item]).then(
            ([answer]) => answer,
            (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
          ),
        ),
      );
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
