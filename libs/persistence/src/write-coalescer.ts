import { isDataError } from './database/pool';

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: Error) => void;
}

/**
 * Keeps one write in flight and merges everything that arrives meanwhile into the next one, so many concurrent
 * callers cost a few statements (and commits) instead of one each. Each caller's promise settles with the
 * write that held its item: resolved once that write is durable, rejected if it failed.
 *
 * One item's bad data must not fail its neighbours: a write the database refuses for its data (isDataError:
 * SQLSTATE classes 22 and 23) is split in halves, each written again, until the item it cannot store is alone;
 * only that caller is rejected, with the database's reason, and the others' items are written. (A batch of n
 * with one bad item costs about 2·log2(n) more writes, and only when it happens.) Any other failure (a lost
 * connection, a timeout) says nothing about the items: the whole write is rejected, for its callers to retry.
 * So `write` must be all or nothing: a write that failed must have stored none of its items.
 */
export class WriteCoalescer<T, R> {
  private queue: Waiting<T, R>[] = [];
  private writing = false;
  private scheduled = false;

  constructor(
    private readonly write: (items: T[]) => Promise<R>,
    /** A write takes items until their sizes reach this (always at least one item). */
    private readonly maxSize: number,
    private readonly sizeOf: (item: T) => number = () => 1,
    /**
     * How long the first item of a write may wait for others (0: the rest of this turn of the event loop).
     * For writes nobody waits on to answer a request, a few milliseconds make a write carry many more items.
     */
    private readonly lingerMs = 0,
    /** Which failures are the items' own, so that splitting the write isolates the item at fault. */
    private readonly refusesItems: (err: unknown) => boolean = isDataError,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule() {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      void this.flush();
    };
    // setImmediate lets everything handed in during this turn of the event loop join the write.
    if (this.lingerMs > 0) setTimeout(go, this.lingerMs);
    else setImmediate(go);
  }

  private async flush() {
    if (this.queue.length === 0) return;
    this.writing = true;
    let size = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || size + this.sizeOf(this.queue[n].item) <= this.maxSize)) {
      size += this.sizeOf(this.queue[n].item);
      n++;
    }
    const batch = this.queue.splice(0, n);
    try {
      await this.writeSplitting(batch);
    } finally {
      this.writing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  /** Writes the batch; refused for its data, each half again, in order, down to the one item at fault. */
  private async writeSplitting(batch: Waiting<T, R>[]): Promise<void> {
    try {
      const result = await this.write(batch.map((w) => w.item));
      batch.forEach((w) => w.resolve(result));
    } catch (err) {
      if (batch.length === 1 || !this.refusesItems(err)) {
        batch.forEach((w) => w.reject(err as Error));
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.writeSplitting(batch.slice(0, half));
      await this.writeSplitting(batch.slice(half));
    }
  }
}
