/** What the health endpoint reads: is this worker a live member of its consumer group? */
export class ConsumerState {
  consuming = false;
  lastError: string | null = null;
  /** A refusal only an operator can end (a denied ACL), by what it blocks: the worker is not ready meanwhile. */
  readonly blocked = new Map<string, string>();
}
