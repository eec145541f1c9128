import { createHash } from 'node:crypto';
import { NewPlant, plantDigest } from '@app/contracts';

/** Bytes kept of a key's SHA-256 and of a plant's: 128 bits, so that two ever colliding is not a concern. */
const HASH_BYTES = 16;

/**
 * The plant each sender idempotency key came with, so that a key reused with a different plant is refused
 * (409, as Stripe does) instead of answered 200 and dropped as a duplicate of the first. Kept in this replica's
 * memory, bounded: the latest `maxKeys` keys, each at most `ttlMs` old. A hash and a table lookup per webhook: no
 * database round trip on the hot path. A key reused on another replica is not seen here; the worker notices it
 * (the stored event's digest differs) and reports it.
 *
 * Held off the V8 heap, in typed arrays allocated once: per key, 16 bytes of the key's SHA-256, 16 of the plant's
 * digest and its time (~5 MB at 100,000 keys, whatever keys senders choose). As JavaScript strings in a Map the
 * same keys took ~22 MB of old space, which V8 then grew well past (bench:gateway: 307 MB peak RSS at 100,000
 * distinct webhook-ids; docs/benchmarks-log.md). The keys sit in a ring in arrival order (the oldest is replaced),
 * indexed by an open-addressing table (linear probing, deletion by backward shift).
 */
export class IdempotencyKeys {
  private readonly keyHashes: Uint8Array;
  private readonly digests: Uint8Array;
  private readonly times: Float64Array;
  private readonly held: Uint8Array; // 1 where a ring slot holds a key
  /** Ring slot + 1 at each table position; 0 where empty. At least twice the slots, so probes stay short. */
  private readonly table: Int32Array;
  private readonly mask: number;
  private next = 0; // the ring slot the next key goes into
  private count = 0;

  constructor(
    readonly maxKeys = 100_000,
    private readonly ttlMs = 24 * 3_600_000,
  ) {
    this.keyHashes = new Uint8Array(maxKeys * HASH_BYTES);
    this.digests = new Uint8Array(maxKeys * HASH_BYTES);
    this.times = new Float64Array(maxKeys);
    this.held = new Uint8Array(maxKeys);
    const size = 2 ** Math.ceil(Math.log2(Math.max(2, maxKeys * 2)));
    this.table = new Int32Array(size);
    this.mask = size - 1;
  }

  get size(): number {
    return this.count;
  }

  /** 'different' when the key came before with another plant; otherwise remembers it and says 'new' or 'same'. */
  check(key: string, plant: NewPlant, now = Date.now()): 'new' | 'same' | 'different' {
    const keyHash = createHash('sha256').update(key).digest().subarray(0, HASH_BYTES);
    const digest = Buffer.from(plantDigest(plant), 'base64').subarray(0, HASH_BYTES);
    const at = this.find(keyHash);
    if (at >= 0) {
      const slot = this.table[at] - 1;
      if (now - this.times[slot] < this.ttlMs) {
        return equal(this.digests, slot, digest) ? 'same' : 'different';
      }
      this.remove(slot); // past its window: remembered anew, as the newest
    }
    this.insert(keyHash, digest, now);
    return 'new';
  }

  private home(hash: Uint8Array, offset = 0): number {
    return (hash[offset] | (hash[offset + 1] << 8) | (hash[offset + 2] << 16) | (hash[offset + 3] << 24)) & this.mask;
  }

  /** The table position of the key, or -1. */
  private find(keyHash: Uint8Array): number {
    for (let i = this.home(keyHash); this.table[i] !== 0; i = (i + 1) & this.mask) {
      if (equal(this.keyHashes, this.table[i] - 1, keyHash)) return i;
    }
    return -1;
  }

  private insert(keyHash: Uint8Array, digest: Uint8Array, now: number) {
    const slot = this.next;
    if (this.held[slot]) this.remove(slot); // the oldest key gives way
    this.keyHashes.set(keyHash, slot * HASH_BYTES);
    this.digests.set(digest, slot * HASH_BYTES);
    this.times[slot] = now;
    this.held[slot] = 1;
    let i = this.home(keyHash);
    while (this.table[i] !== 0) i = (i + 1) & this.mask;
    this.table[i] = slot + 1;
    this.next = (slot + 1) % this.maxKeys;
    this.count++;
  }

  /** Forgets the key in `slot`: its table entry goes, and the entries probed past it shift back to stay reachable. */
  private remove(slot: number) {
    let i = this.home(this.keyHashes, slot * HASH_BYTES);
    while (this.table[i] !== slot + 1) i = (i + 1) & this.mask;
    for (let j = (i + 1) & this.mask; this.table[j] !== 0; j = (j + 1) & this.mask) {
      const k = this.home(this.keyHashes, (this.table[j] - 1) * HASH_BYTES);
      // An entry whose home lies cyclically in (i, j] is still reachable from it; any other moves into the gap.
      const reachable = i <= j ? i < k && k <= j : i < k || k <= j;
      if (reachable) continue;
      this.table[i] = this.table[j];
      i = j;
    }
    this.table[i] = 0;
    this.held[slot] = 0;
    this.count--;
  }
}

const equal = (bytes: Uint8Array, slot: number, hash: Uint8Array): boolean => {
  const from = slot * HASH_BYTES;
  for (let b = 0; b < HASH_BYTES; b++) if (bytes[from + b] !== hash[b]) return false;
  return true;
};
