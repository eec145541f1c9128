import { createHash } from 'node:crypto';
import { NewPlant, plantDigest } from '@app/contracts';
import { BoundedMap } from '@app/observability';

/**
 * The plant each sender idempotency key came with, so that a key reused with a different plant is refused
 * (409, as Stripe does) instead of answered 200 and dropped as a duplicate of the first. Kept in this replica's
 * memory, bounded: between `maxKeys` / 2 and `maxKeys` of the latest keys, at most `ttlMs` old, a digest each.
 * A hash and a map lookup per webhook: no database round trip on the hot path. A key reused on another replica
 * is not seen here; the worker notices it (the stored event's digest differs) and reports it.
 *
 * Keys are at most 255 characters (see HeaderLimits); one longer than its SHA-256 digest is held as the digest,
 * so an entry costs at most ~90 characters whatever keys senders choose (~25 MB at 100,000 keys).
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
    const held = heldAs(key);
    const known = this.seen.get(held);
    if (known && now - known.at < this.ttlMs) return known.digest === digest ? 'same' : 'different';
    this.seen.set(held, { digest, at: now });
    return 'new';
  }
}

const DIGEST_LENGTH = 44; // SHA-256 in base64
/** A key as held: itself when no longer than a digest, else a space (never in a key) and its digest. */
const heldAs = (key: string): string =>
  key.length <= DIGEST_LENGTH ? key : ' ' + createHash('sha256').update(key).digest('base64');
