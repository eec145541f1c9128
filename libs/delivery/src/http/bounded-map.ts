/**
 * A Map that keeps at most `max` entries: setting one more drops the least recently used, handed to `onEvict`
 * (an agent to close). What a worker keeps per subscriber (OAuth 2 tokens, mTLS agents) must not grow with the
 * number of subscribers.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(
    private readonly max: number,
    private readonly onEvict?: (value: V) => void,
  ) {}

  /** The value, now the most recently used (a Map iterates in insertion order: re-inserted, it goes last). */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    for (const [oldest, evicted] of this.entries) {
      if (this.entries.size <= this.max) break;
      this.entries.delete(oldest);
      this.onEvict?.(evicted);
    }
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Every value, and the map emptied: for closing them all. */
  drain(): V[] {
    const values = [...this.entries.values()];
    this.entries.clear();
    return values;
  }

  get size(): number {
    return this.entries.size;
  }
}
