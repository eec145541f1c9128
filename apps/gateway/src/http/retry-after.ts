/**
 * The `Retry-After` seconds (and `retryAfterSeconds` of a problem) for a refusal that ends in `waitMs`: rounded up,
 * so that a client retrying when told is not refused again for the last fraction of a second, and at least 1 (0
 * would tell a client to retry at once, in a loop). `maxSeconds` caps it where the wait is only an upper bound
 * (a replay's hold ends when that replay does, usually sooner).
 */
export function retryAfterSeconds(waitMs: number, maxSeconds = Infinity): number {
  return Math.max(1, Math.min(maxSeconds, Math.ceil(waitMs / 1000)));
}
