/** Why bytes could not be reserved: the process holds its whole budget, or this sender holds its whole share. */
export type Shortfall = 'budget' | 'share';

/** Bytes reserved for one request body; grown as the body arrives, given back once, however the request ends. */
export interface Reservation {
  readonly sender: string;
  /** Bytes this reservation holds now. */
  readonly bytes: number;
  /** Reserves `bytes` more: null when granted; else why not, and nothing was taken. */
  grow(bytes: number): Shortfall | null;
  /** Gives every byte back. Safe to call more than once, and from every path that ends a request. */
  release(): void;
}

/**
 * The bytes of request bodies the gateway holds while it reads them, accounted for the whole process and per
 * sender (a bearer credential, or a remote address where there is none). Fastify kept an unfinished body as a
 * string on the V8 heap, bounded only per request (WEBHOOK_MAX_BYTES) and by the connection count: 4,096 × 64 KiB
 * is 256 MiB against a 128 MB heap, and 1,175 held bodies ended the process (issue #34). Every body is read
 * within a reservation here, so what all of them hold is at most `limit` bytes, and one sender at most `share`
 * of them: it cannot take the budget from everyone else. What cannot be reserved is refused (503), not queued:
 * a waiting request would hold its bytes in Node's buffers instead.
 */
export class BodyBudget {
  private total = 0;
  /** Only senders holding bytes now: an entry goes with its last byte, so the map is bounded by the budget. */
  private readonly bySender = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly share: number,
  ) {
    if (share > limit) throw new Error(`A sender's share (${share}) cannot exceed the budget (${limit})`);
  }

  /** Bytes held by every reservation together. */
  get held(): number {
    return this.total;
  }

  heldBy(sender: string): number {
    return this.bySender.get(sender) ?? 0;
  }

  /** Senders holding bytes now. */
  get senders(): number {
    return this.bySender.size;
  }

  /** An empty reservation for one body of `sender`'s. */
  open(sender: string): Reservation {
    let bytes = 0;
    let released = false;
    return {
      sender,
      get bytes() {
        return bytes;
      },
      grow: (more: number): Shortfall | null => {
        // Growing after release would take bytes that nothing gives back: a bug in the caller, said loudly.
        if (released) throw new Error('A released body reservation cannot grow');
        if (!Number.isSafeInteger(more) || more < 0) throw new Error(`Cannot reserve ${more} bytes`);
        const shortfall = this.take(sender, more);
        if (!shortfall) bytes += more;
        return shortfall;
      },
      release: () => {
        if (released) return;
        released = true;
        this.give(sender, bytes);
        bytes = 0;
      },
    };
  }

  private take(sender: string, bytes: number): Shortfall | null {
    const mine = this.heldBy(sender);
    // The sender's own share first: a sender past it is told so, whatever the others hold.
    if (mine + bytes > this.share) return 'share';
    if (this.total + bytes > this.limit) return 'budget';
    this.total += bytes;
    if (bytes > 0) this.bySender.set(sender, mine + bytes);
    return null;
  }

  private give(sender: string, bytes: number): void {
    if (bytes === 0) return;
    this.total -= bytes;
    const left = this.heldBy(sender) - bytes;
    if (left > 0) this.bySender.set(sender, left);
    else this.bySender.delete(sender);
  }
}
