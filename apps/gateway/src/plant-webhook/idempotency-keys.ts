import { NewPlant, plantDigest } from '@app/contracts';
import { BoundedMap } from '@app/observability';

/**
 * The plant each sender idempotency key came with, so that a key reused with a different plant is refused
 * (409, as Stripe does) instead of answered 200 and dropped as a duplicate of the first. Kept in this replica's
 * memory, bounded: between `maxKeys` / 2 and `maxKeys` of the latest keys, at most `ttlMs` old, a digest each.
 * A hash and a map lookup per webhook: no database round trip on the hot path. A key reused on another replica
 * is not seen here; the worker notices it (the stored event's digest differs) and reports it.
 */
export class IdempotencyKeys {
  private readonly seen: BoundedMap<string, { digest: string; at: number }>;

  constructor(
    readonly maxKeys = 100_000,
    private readonly ttlMs = 24 * 3_600_000,
  ) {
    this.seen = new BoundedMap(maxKeys);
  }

  get size(): number {
    return this.seen.size;
  }

  /** 'different' when the key came before with another plant; otherwise remembers it and says 'new' or 'same'. */
  check(key: string, plant: NewPlant, now = Date.now()): 'new' | 'same' | 'different' {
    const digest = plantDigest(plant);
    const known = this.seen.get(key);
    if (known && now - known.at < this.ttlMs) return known.digest === digest ? 'same' : 'different';
    this.seen.set(key, { digest, at: now });
    return 'new';
  }
}
