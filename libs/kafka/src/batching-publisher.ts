import { Message, Producer } from 'kafkajs';
import { partitionOfKey } from './key-partitioner';

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

export interface PublisherOptions {
  /**
   * Which lane a record joins: records of one lane go one request at a time, lanes go in parallel. Give the
   * record's partition (see `partitionLanes`), so a broker that hangs holds only the partitions it leads; by
   * default everything shares one lane.
   */
  laneOf?(topic: string, message: Message): string;
  /** The broker-side acks=all wait of each produce request (Kafka answers REQUEST_TIMED_OUT after it). */
  ackTimeoutMs?: number;
  /**
   * The most bytes of records in one produce request (DEFAULT_MAX_BATCH_BYTES unless given). A lane's records go to
   * one partition as one record batch, which the broker refuses whole past its `message.max.bytes` (1 MiB by
   * default): a thousand 64 KiB webhooks in one request were all answered MESSAGE_TOO_LARGE (issue #34's replay).
   */
  maxBatchBytes?: number;
}

/** Under Kafka's default message.max.bytes (1,048,588) with room for the batch's own framing. */
export const DEFAULT_MAX_BATCH_BYTES = 768 * 1024;

/** What a record weighs in a produce request: its key, value and headers (framing aside). */
export function recordBytes(message: Message): number {
  const size = (v: unknown) =>
    v == null ? 0 : Buffer.isBuffer(v) ? v.length : Buffer.byteLength(typeof v === 'string' ? v : String(v));
  let n = size(message.key) + size(message.value);
  const headers = message.headers ?? {};
  for (const k in headers) {
    const v = headers[k];
    n += Buffer.byteLength(k) + (Array.isArray(v) ? v.reduce((a: number, x) => a + size(x), 0) : size(v));
  }
  return n;
}

interface Lane {
  queue: Pending[];
  inFlight: Promise<void> | null;
  scheduled: boolean;
}

/**
 * Coalesces concurrent publishes into one produce request per lane (acks=all) while keeping one request in
 * flight per lane: every caller's promise resolves only once Kafka has acknowledged the batch that holds its
 * record. Under load this turns N webhooks into a handful of requests instead of N. One lane per partition
 * keeps per-partition order (a batch is never overtaken by the next of its partition) and keeps a frozen
 * broker's requests (kafkajs waits out its request timeout, then retries) from holding up the partitions that
 * other brokers lead.
 */
export class BatchingPublisher {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly producer: Producer,
    private readonly maxBatch = 1000,
    private readonly hooks: PublisherHooks = {},
    private readonly options: PublisherOptions = {},
  ) {}

  get pending(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.length;
    return n;
  }

  /**
   * Resolves once Kafka acknowledged the record. After `timeoutMs` it rejects: a record still queued is
   * withdrawn (it will never be written); one already sent may still land, which idempotency keys absorb.
   */
  publish(topic: string, message: Message, timeoutMs: number): Promise<void> {
    const key = this.options.laneOf?.(topic, message) ?? '';
    const lane = this.lanes.get(key) ?? { queue: [], inFlight: null, scheduled: false };
    this.lanes.set(key, lane);
    return new Promise<void>((resolve, reject) => {
      const item: Pending = { topic, message, resolve, reject, sent: false, settled: false };
      const timer = setTimeout(() => {
        if (item.settled) return;
        item.settled = true;
        if (!item.sent) lane.queue = lane.queue.filter((q) => q !== item);
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
      lane.queue.push(item);
      this.schedule(lane);
    });
  }

  /** Waits until every queued record has been sent and acknowledged (or failed). */
  async drain(): Promise<void> {
    for (;;) {
      const busy = [...this.lanes.values()].filter((l) => l.inFlight || l.queue.length > 0);
      if (busy.length === 0) return;
      busy.forEach((lane) => lane.inFlight || this.flush(lane));
      await Promise.all(busy.map((lane) => lane.inFlight));
    }
  }

  private schedule(lane: Lane) {
    if (lane.scheduled || lane.inFlight) return;
    lane.scheduled = true;
    // setImmediate lets every request parsed in this turn of the event loop join the batch.
    setImmediate(() => {
      lane.scheduled = false;
      this.flush(lane);
    });
  }

  private flush(lane: Lane) {
    if (lane.inFlight || lane.queue.length === 0) return;
    // As many records as fit the count and the bytes (always one: a record alone past the bound is the broker's
    // to refuse, and the gateway's WEBHOOK_MAX_BYTES keeps it far below).
    const maxBytes = this.options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
    let count = 0;
    for (let bytes = 0; count < Math.min(this.maxBatch, lane.queue.length); count++) {
      bytes += recordBytes(lane.queue[count].message);
      if (count > 0 && bytes > maxBytes) break;
    }
    const batch = lane.queue.splice(0, count);
    batch.forEach((item) => (item.sent = true));
    const byTopic = new Map<string, Message[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic) ?? [];
      list.push(item.message);
      byTopic.set(item.topic, list);
    }
    const started = process.hrtime.bigint();
    const ackTimeout = this.options.ackTimeoutMs;
    lane.inFlight = this.producer
      .sendBatch({
        acks: -1,
        ...(ackTimeout ? { timeout: ackTimeout } : {}),
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      })
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
        lane.inFlight = null;
        if (lane.queue.length > 0) this.schedule(lane);
      });
  }
}

/**
 * A lane per partition, computed the way the producer's partitioner places a keyed record (key-partitioner.ts),
 * from the topics' partition counts (a topic not listed, or a record without a key, shares its topic's one lane).
 * Only the grouping depends on it: kafkajs still places each record itself, from the cluster's metadata, so a
 * wrong count costs isolation, never a record in the wrong partition.
 */
export function partitionLanes(partitionsOf: (topic: string) => number | undefined) {
  return (topic: string, message: Message): string => {
    const count = partitionsOf(topic);
    if (!count || message.key == null || message.partition != null) return `${topic}:${message.partition ?? '*'}`;
    return `${topic}:${partitionOfKey(message.key, count)}`;
  };
}
