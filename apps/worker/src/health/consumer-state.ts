/** What the health endpoint reads: is this worker a live member of its consumer group? */
export class ConsumerState {
  consuming = false;
  lastError: string | null = null;
  /** A refusal only an operator can end (a denied ACL), by what it blocks: the worker is not ready meanwhile. */
  readonly blocked = new Map<string, string>();
  /**
   * Consumers their watchdog judged stuck ('ingest', 'dead-letter archive'), with why: the worker is not ready
   * until the rejoin brings progress back.
   */
  readonly stalled = new Map<string, string>();
  /** Forced rejoins so far, by consumer (plant_store_consumer_forced_rejoins_total). */
  readonly forcedRejoins = new Map<string, number>();
  /** plant.created's lag per partition as the backlog monitor last sampled it: the ingest watchdog reads it. */
  readonly lag = new Map<number, number>();

  countRejoin(consumer: string): void {
    this.forcedRejoins.set(consumer, (this.forcedRejoins.get(consumer) ?? 0) + 1);
  }
}
