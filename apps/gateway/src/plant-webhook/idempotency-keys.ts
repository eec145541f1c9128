import { createHash } from 'node:crypto';
import { NewPlant } from '@app/contracts';

/**
 * The plant each sender idempotency key came with, so that a key reused with a different plant is refused
 * (409, as Stripe does) instead of answered 200 and dropped as a duplicate of the first. Kept in this replica's
 * memory, bounded: the last `maxKeys` keys of the last `ttlMs`, as a 32-byte digest each (~100 bytes a key).
 * A hash and a map lookup per webhook: no database round trip on the hot path.
 */
export class IdempotencyKeys {
  private readonly seen = new Map<string, { digest: string; at: number }>();

  constructor(
    private readonly maxKeys = 100_000,
    private readonly ttlMs = 24 * 3_600_000,
  ) {}

  /** 'different' when the key came before with another plant; otherwise remembers it and says 'new' or 'same'. */
  check(key: string, plant: NewPlant, now = Date.now()): 'new' | 'same' | 'different' {
    const digest = createHash('sha256')
      .update(JSON.stringify([plant.id, plant.name, plant.tag ?? null]))
      .digest('base64');
    const known = this.seen.get(key);
    if (known && now - known.at < this.ttlMs) return known.digest === digest ? 'same' : 'different';
    this.seen.delete(key); // re-inserted last: insertion order is the eviction order
    this.seen.set(key, { digest, at: now });
    if (this.seen.size > this.maxKeys) this.seen.delete(this.seen.keys().next().value!);
    return 'new';
  }
}
