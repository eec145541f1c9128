import type { SendResult } from './webhook-client';

/**
 * An attempt as it is made, to any destination: when it started, the signature once it is signed, and its
 * result built from what came back (an HTTP status, a broker's answer or an error), its latency measured to then.
 */
export class AttemptRecord {
  private readonly attemptedAt = new Date();
  private readonly started = performance.now();
  signature: string | null = null;

  /** When it started: what a signature's timestamp says. */
  get at(): Date {
    return this.attemptedAt;
  }

  /** Milliseconds since it started. */
  elapsedMs(): number {
    return performance.now() - this.started;
  }

  result(partial: Partial<SendResult>): SendResult {
    return {
      attemptedAt: this.attemptedAt.toISOString(),
      status: null,
      latencyMs: Math.round(this.elapsedMs()),
      error: null,
      responseBody: null,
      signature: this.signature,
      retryAfterMs: null,
      ...partial,
    };
  }
}
