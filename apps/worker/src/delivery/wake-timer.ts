/**
 * Calls `wake` once at the earliest of the times asked for: a rate-limited subscriber's next token is due, and
 * nothing else would start its queued deliveries before the next answer or claim.
 */
export class WakeTimer {
  private pending: { timer: NodeJS.Timeout; at: number } | null = null;

  constructor(private readonly wake: () => void) {}

  in(ms: number, now = Date.now()) {
    const at = now + ms;
    if (this.pending && this.pending.at <= at) return;
    this.stop();
    const timer = setTimeout(() => {
      this.pending = null;
      this.wake();
    }, ms);
    this.pending = { timer, at };
  }

  stop() {
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = null;
  }
}

/**
 * Calls `wake(key)` at the time last asked for each key: when a subscriber's pause ends, its deliveries are claimed
 * again without waiting for a poll. Asking again for a key moves its wake-up; timers never hold the process open.
 */
export class WakeTimers<K> {
  private readonly timers = new Map<K, NodeJS.Timeout>();

  constructor(private readonly wake: (key: K) => void) {}

  at(key: K, at: number, now = Date.now()) {
    clearTimeout(this.timers.get(key));
    const t = setTimeout(
      () => {
        this.timers.delete(key);
        this.wake(key);
      },
      Math.max(0, at - now) + 5,
    );
    t.unref();
    this.timers.set(key, t);
  }

  stop() {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
