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
