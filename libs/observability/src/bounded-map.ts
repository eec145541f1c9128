/**
 * A map that remembers at most `capacity` entries, for state kept per key on a hot path (idempotency keys, opened
 * secrets, rate-limited log lines). Two generations of capacity / 2: when the current one is full it becomes the
 * previous one and the old previous one is dropped whole. O(1) throughout: evicting a Map's oldest entry one at a
 * time left V8 walking over deleted slots (measured ~20 µs per insert at 100,000 entries).
 */
export class BoundedMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.current.has(key) ? this.current.get(key) : this.previous.get(key);
  }

  set(key: K, value: V): void {
    if (!this.current.has(key) && this.current.size >= this.capacity / 2) {
      this.previous = this.current; // the older half is forgotten whole
      this.current = new Map();
    }
    this.current.set(key, value);
  }

  /** Entries held now (stale copies of a key across generations counted twice): never above `capacity`. */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}
