import { performance } from 'node:perf_hooks';

/** A slot one test send holds while it waits for its receiver; give it back once, however the send ends. */
export interface TestSendSlot {
  release(): void;
}

/**
 * Why no slot: `share`, the subscription holds its whole share (with when its oldest send is answered at the
 * latest); `total`, the gateway holds every slot.
 */
export type NoSlot = { refused: 'share'; retryAfterMs: number } | { refused: 'total' };

/**
 * The test sends one gateway waits on at once: `total` in all, at most `perSubscription` of one subscription's
 * (issue 36, "test sends pinned": a portal link with a slow endpoint held all 16, and the operator's test of
 * another subscription got 503). A send may wait `holdMs` (DELIVERY_TIMEOUT_MS) on its receiver, so with the
 * share a slow receiver delays only its own subscription's tests; the others keep the rest of the slots. Only
 * subscriptions with a send in flight have an entry, so the map holds at most `total` of them.
 */
export class TestSendSlots {
  private inFlight = 0;
  /** When each send in flight of a subscription started, oldest first. */
  private readonly started = new Map<string, number[]>();

  constructor(
    readonly total: number,
    readonly perSubscription: number,
    private readonly holdMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Sends waiting now, of every subscription together, or of one. */
  held(subscriptionId?: string): number {
    return subscriptionId === undefined ? this.inFlight : (this.started.get(subscriptionId)?.length ?? 0);
  }

  /** A slot for one test send of `subscriptionId`, or why not (and nothing is taken). */
  take(subscriptionId: string): TestSendSlot | NoSlot {
    const now = this.now();
    const mine = this.started.get(subscriptionId) ?? [];
    // The subscription's own share first: past it, that subscription is told so, whatever the others hold.
    if (mine.length >= this.perSubscription)
      return { refused: 'share', retryAfterMs: Math.max(0, mine[0] + this.holdMs - now) };
    if (this.inFlight >= this.total) return { refused: 'total' };
    this.inFlight++;
    mine.push(now);
    this.started.set(subscriptionId, mine);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.inFlight--;
        const left = this.started.get(subscriptionId) ?? [];
        const at = left.indexOf(now);
        if (at >= 0) left.splice(at, 1);
        if (left.length === 0) this.started.delete(subscriptionId);
      },
    };
  }
}
