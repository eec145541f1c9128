import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';

/** Buckets remembered at most, whatever the number of keys: past it the least recently used one goes. */
export const MAX_TOKEN_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  /** When `tokens` was last computed (the clock's milliseconds). */
  at: number;
}

/**
 * A token bucket per key (a portal link): each holds up to `burst` tokens and gains `perMinute` a minute; a call
 * takes one, or is refused with the time until one is there. Refused calls take nothing, so a caller that keeps
 * trying gets the rate and no more.
 *
 * Bounded in memory: a bucket untouched for `idleMs` (the time an empty one takes to fill) is full, which is the
 * same as none at all, so it is dropped without changing any answer (swept from the least recently used, at most
 * once per `idleMs`). Past `maxKeys` buckets the cache drops the least recently used, and that key starts again
 * with a full bucket: only a change of answer with more than `maxKeys` keys active within `idleMs`, and portal
 * links are made by the operator only.
 */
export class TokenBuckets {
  // Only `take` sets, and `peek` reads without touching: the cache's order of use is the order of `at`. Its own
  // ttl is not used: the sweep stops at the first bucket in use, where purgeStale would look at every one.
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly perMs: number;
  /** How long an empty bucket takes to fill: one untouched this long is full, and forgotten. */
  readonly idleMs: number;
  private sweptAt: number;

  constructor(
    readonly perMinute: number,
    readonly burst: number,
    readonly maxKeys = MAX_TOKEN_BUCKETS,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(perMinute > 0) || !(burst >= 1) || !(maxKeys >= 1))
      throw new Error(`A token bucket needs a rate above 0, a burst and a key count of at least 1`);
    this.perMs = perMinute / 60_000;
    this.idleMs = burst / this.perMs;
    this.sweptAt = this.now();
    this.buckets = new LRUCache({ max: maxKeys });
  }

  /** Buckets held now: never above `maxKeys`. */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes a token of `key`'s: null when granted, else the milliseconds until one is there (nothing taken). */
  take(key: string): number | null {
    const now = this.now();
    this.sweep(now);
    const bucket = this.buckets.peek(key);
    const elapsed = bucket ? Math.max(0, now - bucket.at) : 0;
    const tokens = bucket ? Math.min(this.burst, bucket.tokens + elapsed * this.perMs) : this.burst;
    const granted = tokens >= 1;
    // Touched either way: a key refused again and again is in use, and must not be the one dropped for room.
    this.buckets.set(key, { tokens: granted ? tokens - 1 : tokens, at: now });
    return granted ? null : Math.ceil((1 - tokens) / this.perMs);
  }

  /** The milliseconds until `key` has a token, or null when it has one now: nothing taken, nothing touched. */
  peek(key: string): number | null {
    const bucket = this.buckets.peek(key);
    if (!bucket) return null;
    const tokens = Math.min(this.burst, bucket.tokens + Math.max(0, this.now() - bucket.at) * this.perMs);
    return tokens >= 1 ? null : Math.ceil((1 - tokens) / this.perMs);
  }

  /** Drops the buckets untouched for `idleMs` (full: forgetting them changes nothing), oldest first. */
  private sweep(now: number): void {
    if (now - this.sweptAt < this.idleMs) return;
    this.sweptAt = now;
    for (;;) {
      // A new iterator for each: the cache does not promise that one outlives a delete.
      const oldest = this.buckets.rkeys().next();
      if (oldest.done || now - this.buckets.peek(oldest.value)!.at < this.idleMs) break; // the rest are later
      this.buckets.delete(oldest.value);
    }
  }
}
