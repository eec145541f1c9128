import type { Consumer } from 'kafkajs';

/**
 * Why a consumer is judged stuck, or null while it is not. The fault suite once saw kafkajs 2.2.4 consumers go
 * silent for good after the group coordinator moved (NOT_COORDINATOR on Heartbeat and OffsetCommit, then no
 * fetch, no error, no crash; issue #33, cause inside kafkajs not confirmed). Nothing inside kafkajs notices, so
 * this watches from outside, by what a live consumer always does:
 * - a member of its group fetches (an idle partition's fetch returns empty after maxWaitTime), heartbeats
 *   (also while a handler retries a database outage: ingest's retry loop heartbeats), or ends batches;
 * - a consumer that lost its membership (a rebalance, a crash kafkajs restarts) regains it;
 * - a partition it owns that has lag gets consumed, unless one of its batches is still being handled.
 * Past `stallMs` on any of these, the owner rejoins with a new consumer (ConsumerWatchdog's `rejoin`).
 */
export type StallReason = string | null;

export interface WatchdogOptions {
  /** How long a consumer may show none of the signs of life above. */
  stallMs: number;
  now?: () => number;
  /** The group's lag on a partition as the broker last reported it (the backlog monitor's sample), if known. */
  lagOf?(topic: string, partition: number): number | undefined;
}

type Key = string;
const keyOf = (topic: string, partition: number): Key => `${topic}:${partition}`;

/** The consumer's signs of life, fed by its instrumentation events; `check()` says whether it is stuck. */
export class ConsumerProgress {
  private readonly now: () => number;
  private lastActivityAt: number;
  /** Since when it has not been a member, or null while it is one. */
  private notMemberSince: number | null;
  private lastError: string | null = null;
  private assigned: { key: Key; topic: string; partition: number }[] = [];
  /** Partitions with a batch being handled, by when it started. */
  private readonly handling = new Map<Key, number>();
  /** When each owned partition last ended a batch (or was assigned). */
  private readonly consumedAt = new Map<Key, number>();
  /**
   * Since when each owned partition's lag has been seen, without a gap in the samples. A broker outage clears the
   * samples (lag cannot be read) and with them this: a partition without a leader cannot be consumed, and that
   * time is not the consumer's to answer for (counting it replaced consumers two seconds after the brokers came
   * back, for no good).
   */
  private readonly lagSeenSince = new Map<Key, number>();

  constructor(private readonly options: WatchdogOptions) {
    this.now = options.now ?? Date.now;
    this.lastActivityAt = this.now();
    this.notMemberSince = this.now();
  }

  /** Feeds it every event that matters from this consumer (a new consumer gets a fresh ConsumerProgress). */
  watch(consumer: Consumer): void {
    const e = consumer.events;
    const active = () => (this.lastActivityAt = this.now());
    for (const ev of [e.FETCH, e.FETCH_START, e.HEARTBEAT, e.COMMIT_OFFSETS]) consumer.on(ev, active);
    consumer.on(e.GROUP_JOIN, (ev) => this.joined(ev.payload.memberAssignment ?? {}));
    consumer.on(e.REBALANCING, () => this.left(null));
    consumer.on(e.CRASH, (ev) => this.left(String((ev.payload.error as Error)?.message ?? ev.payload.error)));
    consumer.on(e.START_BATCH_PROCESS, (ev) => {
      active();
      this.handling.set(keyOf(ev.payload.topic, ev.payload.partition), this.now());
    });
    consumer.on(e.END_BATCH_PROCESS, (ev) => {
      active();
      const key = keyOf(ev.payload.topic, ev.payload.partition);
      this.handling.delete(key);
      this.consumedAt.set(key, this.now());
    });
  }

  joined(assignment: Record<string, number[]>): void {
    const now = this.now();
    this.notMemberSince = null;
    this.lastActivityAt = now;
    this.handling.clear();
    this.assigned = Object.entries(assignment).flatMap(([topic, ps]) =>
      ps.map((partition) => ({ key: keyOf(topic, partition), topic, partition })),
    );
    this.consumedAt.clear();
    for (const { key } of this.assigned) this.consumedAt.set(key, now);
    this.lagSeenSince.clear();
  }

  left(error: string | null): void {
    if (error) this.lastError = error;
    this.notMemberSince ??= this.now();
  }

  check(): StallReason {
    const now = this.now();
    const { stallMs } = this.options;
    const secs = (ms: number) => `${Math.round(ms / 1000)}s`;
    if (this.notMemberSince !== null) {
      const out = now - this.notMemberSince;
      if (out <= stallMs) return null;
      return `not a member of its consumer group for ${secs(out)}${this.lastError ? ` (last error: ${this.lastError})` : ''}`;
    }
    const quiet = now - this.lastActivityAt;
    if (quiet > stallMs) return `no fetch, heartbeat or batch for ${secs(quiet)}`;
    for (const { key, topic, partition } of this.assigned) {
      const behind = this.options.lagOf?.(topic, partition) ?? 0;
      if (behind <= 0) {
        this.lagSeenSince.delete(key);
        continue;
      }
      if (!this.lagSeenSince.has(key)) this.lagSeenSince.set(key, now);
      if (this.handling.has(key)) continue;
      const idle = now - Math.max(this.consumedAt.get(key) ?? now, this.lagSeenSince.get(key)!);
      if (idle > stallMs) return `partition ${key} is ${behind} records behind and was not consumed for ${secs(idle)}`;
    }
    return null;
  }
}

export interface ConsumerWatchdogOptions extends WatchdogOptions {
  /** How often it looks. */
  checkEveryMs?: number;
  /** Replaces the stuck consumer; the watchdog waits for it before it looks again. */
  rejoin(reason: string): Promise<void>;
  /** Told each verdict: a reason when stuck (readiness fails meanwhile), null once it is not. */
  onVerdict?(reason: StallReason): void;
}

/**
 * Checks a consumer's progress on a timer and, when it is stuck, has its owner rejoin with a new consumer
 * (a forced rejoin). One rejoin at a time; each new consumer starts a new ConsumerProgress (`track`).
 */
export class ConsumerWatchdog {
  private progress: ConsumerProgress | null = null;
  private timer: NodeJS.Timeout | null = null;
  private rejoining: Promise<void> | null = null;

  constructor(private readonly options: ConsumerWatchdogOptions) {}

  /** Watches this consumer from now on (the first one, and each one a rejoin creates). */
  track(consumer: Consumer): ConsumerProgress {
    this.progress = new ConsumerProgress(this.options);
    this.progress.watch(consumer);
    return this.progress;
  }

  start(): void {
    const every = this.options.checkEveryMs ?? Math.max(1000, Math.floor(this.options.stallMs / 6));
    this.timer ??= setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: rejoins when stuck. Resolves when a rejoin it started has finished (tests await it). */
  async tick(): Promise<void> {
    if (this.rejoining || !this.progress) return;
    const reason = this.progress.check();
    this.options.onVerdict?.(reason);
    if (!reason) return;
    this.rejoining = this.options
      .rejoin(reason)
      .catch(() => undefined) // the owner logs; the next look judges the new consumer (or the old one again)
      .finally(() => (this.rejoining = null));
    await this.rejoining;
  }
}
