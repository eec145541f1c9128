interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: Error) => void;
}

/**
 * Keeps one write in flight and merges everything that arrives meanwhile into the next one, so many concurrent
 * callers cost a few statements (and commits) instead of one each. Each caller's promise settles with the
 * write that held its item: resolved once that write is durable, rejected if it failed.
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
      const result = await this.write(batch.map((w) => w.item));
      batch.forEach((w) => w.resolve(result));
    } catch (err) {
      batch.forEach((w) => w.reject(err as Error));
    } finally {
      this.writing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
