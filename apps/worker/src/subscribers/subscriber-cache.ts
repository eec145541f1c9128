import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import {
  Subscriber,
  SUBSCRIBER_SOURCE,
  SubscriberSet,
  SubscriberSource,
  SUBSCRIBERS_CONFIRM_WINDOW_MS,
  SUBSCRIBERS_POLL_MS,
} from '@app/delivery';
import { nestSink, RateLimitedLog } from '@app/observability';
import { createPool, databaseBoundsFrom, SubscriptionChanges } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';

/** How long a send waits for the subscriptions to be confirmed before it gives up (its lease brings it back). */
const ADMIT_WAIT_MS = 5000;

/**
 * The enabled subscriptions, credentials opened, held in memory: the ingest stage fans a batch out from them and
 * the dispatcher sends with them. Reloaded when PostgreSQL notifies a change (migration 23's trigger) and when a
 * poll of the version every SUBSCRIBERS_POLL_MS finds it moved, so a missed notification costs one poll. A reload
 * reads only the subscriptions changed since this copy's version (migration 30's change log), or all of them when
 * the log no longer reaches back that far: one subscription's change costs a reload of that one.
 *
 * Nothing is sent to a subscription that is gone: a send goes only to a subscription in this copy, and only while
 * a read of the version sent within SUBSCRIBERS_CONFIRM_WINDOW_MS found the copy current. A delete returns that
 * long after its commit (the gateway waits), so by then every replica either holds a copy without it or sends
 * nothing until it has one.
 */
@Injectable()
export class SubscriberCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SubscriberCache.name);
  private readonly failures = new RateLimitedLog(nestSink(this.logger));
  private readonly changes: SubscriptionChanges;
  private set: SubscriberSet | null = null;
  /** performance.now() when the read that last found this copy current was sent. */
  private confirmedAt = -Infinity;
  private checking: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private waiters: (() => void)[] = [];
  private readonly listeners: ((set: SubscriberSet) => void)[] = [];

  constructor(
    @Inject(SUBSCRIBER_SOURCE) private readonly source: SubscriberSource,
    @Inject(APP_CONFIG) config: WorkerConfig,
    private readonly metrics: WorkerMetrics,
  ) {
    const pool = createPool({
      url: config.DATABASE_URL,
      max: 1,
      applicationName: 'plant-store-worker-subscriptions',
      ...databaseBoundsFrom(config),
    });
    this.changes = new SubscriptionChanges(pool, () => this.refresh());
  }

  async onModuleInit() {
    this.timer = setInterval(() => this.refresh(), SUBSCRIBERS_POLL_MS);
    await this.check().catch(() => undefined); // the database away: the first fan-out loads (or retries)
  }

  async onModuleDestroy() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.release();
    await this.checking?.catch(() => undefined);
    await this.changes.close().catch(() => undefined);
  }

  /** The subscriptions to fan out to (perhaps a moment old: the ingest statement checks their version). */
  async current(): Promise<SubscriberSet> {
    if (!this.set) await this.check();
    return this.set!;
  }

  /** Reads the version now (and reloads if it moved): a notification came, or a statement found the copy old. */
  refresh() {
    void this.check().catch(() => undefined);
  }

  /** Called with the new copy after every reload (the dispatcher drops what it queued for subscriptions gone). */
  onChange(listener: (set: SubscriberSet) => void) {
    this.listeners.push(listener);
  }

  /**
   * The subscriber to send a delivery with, if its subscription is enabled in a copy confirmed within the window;
   * waits for a confirmation if there is none (the database slow or away), up to ADMIT_WAIT_MS. A subscription
   * this copy does not hold is looked for again in a copy read after the question: a delivery claimed from rows,
   * or fanned out by FAN_OUT (which reads the subscriptions itself), may be to a subscription created since.
   */
  admit(subscriptionId: string): Subscriber | undefined | Promise<Subscriber | undefined> {
    // At once (no await) when confirmed: the check and the send it admits are in the same turn.
    const held = this.confirmed() ? this.set?.subscribers.get(subscriptionId) : undefined;
    return held ?? this.admitLater(subscriptionId, this.confirmed());
  }

  /** `fresh`: wait for a copy confirmed by a read sent from now on (else any confirmed within the window). */
  private async admitLater(subscriptionId: string, fresh: boolean): Promise<Subscriber | undefined> {
    const asked = performance.now();
    const deadline = asked + ADMIT_WAIT_MS;
    const ready = () => (fresh ? this.confirmedAt >= asked : this.confirmed());
    if (fresh) this.refresh();
    while (!ready()) {
      if (performance.now() >= deadline || !this.timer) return undefined;
      await new Promise<void>((resolve) => {
        // Cleared when a check answers first: no timer outlives the wait (nor holds up the process's exit).
        const timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.confirmed() ? this.set?.subscribers.get(subscriptionId) : undefined;
  }

  private confirmed(): boolean {
    return performance.now() - this.confirmedAt < SUBSCRIBERS_CONFIRM_WINDOW_MS;
  }

  /** One check at a time; a request during one runs another after it (it may have read before the change). */
  private check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    this.checking = this.checkOnce()
      .catch((err: Error) => {
        this.failures.log('warn', 'subscriptions', {}, `reading the subscriptions failed, will retry: ${err.message}`);
        throw err;
      })
      .finally(() => {
        this.checking = null;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
    return this.checking;
  }

  private async checkOnce() {
    const sent = performance.now();
    const version = await this.changes.poll(); // first: LISTEN is on before a load, so no change falls between
    if (this.set && version === this.set.version) return this.confirm(sent);
    const loadSent = performance.now();
    // A few versions behind (a change or two): read those subscriptions alone; else, or the first time, all.
    const changed = this.set ? await this.source.loadChanges(this.set) : null;
    const set = changed ?? (await this.source.load());
    this.metrics.subscriptionReloads.inc({ scope: changed ? 'changed' : 'all' });
    this.set = set;
    this.confirm(loadSent);
    for (const listener of this.listeners) listener(set);
  }

  private confirm(sentAt: number) {
    this.confirmedAt = Math.max(this.confirmedAt, sentAt);
    this.release();
  }

  private release() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
