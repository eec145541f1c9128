/** Thrown when the consumer stops or loses the partition while we wait: the batch is left uncommitted. */
export class BatchAbandoned extends Error {
  constructor() {
    super('consumer stopping or partition revoked; batch left uncommitted for redelivery');
    this.name = 'BatchAbandoned';
  }
}

export interface RetryControl {
  heartbeat(): Promise<void>;
  shouldContinue(): boolean;
  onRetry?(attempt: number, err: unknown, waitMs: number): void;
  sleep?(ms: number): Promise<void>;
}

const defaultSleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Retries a failure (database down, Kafka timeout) with capped exponential backoff, for as long as it takes:
 * the event is neither dropped nor committed, and the partition resumes when the cause goes away. Every
 * failure is retried: the caller has already turned what can never succeed (poison, unstorable rows) into
 * dead letters. Heartbeats keep the group membership alive while we wait; the wait is broken into slices so
 * a shutdown is noticed within a second.
 */
export async function retryTransient<T>(fn: () => Promise<T>, ctl: RetryControl): Promise<T> {
  const sleep = ctl.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    if (!ctl.shouldContinue()) throw new BatchAbandoned();
    try {
      return await fn();
    } catch (err) {
      const waitMs = Math.min(200 * 2 ** (attempt - 1), 5000);
      ctl.onRetry?.(attempt, err, waitMs);
      for (let waited = 0; waited < waitMs; waited += 1000) {
        await sleep(Math.min(1000, waitMs - waited));
        if (!ctl.shouldContinue()) throw new BatchAbandoned();
        await ctl.heartbeat().catch(() => {
          throw new BatchAbandoned();
        });
      }
    }
  }
}
