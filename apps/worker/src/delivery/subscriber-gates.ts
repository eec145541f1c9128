import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import {
  AnsweredAttempt,
  BreakerPolicy,
  CircuitState,
  ClaimedDelivery,
  failureText,
  HealthTransition,
  isBreakerFailure,
  pauseAsked,
  rateShare,
  SUBSCRIBER_HEALTH,
  SubscriberHealth,
  summarizeOutcomes,
  TokenBucket,
} from '@app/delivery';
import { nestSink, RateLimitedLog } from '@app/observability';
import { WriteCoalescer } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';
import {
  admissionCapOf,
  applyTransition,
  concurrencyCapOf,
  countAnswer,
  Gate,
  GateListener,
  isPaused,
  isShut,
  mergeSnapshot,
  pauseGate,
  Probe,
  probeLapsed,
  withLimits,
} from './gate-state';
import { WakeTimers } from './wake-timer';

/** How often a replica says it is alive and reads its subscribers' limits and health. */
export const HEARTBEAT_MS = 1000;
/** A replica not heard from for this long no longer takes a share of any limit. */
const LIVE_MS = 3 * HEARTBEAT_MS;

export type { GateListener } from './gate-state';

/**
 * When a subscriber's deliveries may be sent, on this replica (docs/delivery.md, flow control and circuit breaker):
 * - its limits, split between the live replicas (each sends its share: maxDeliveriesPerSecond / replicas, and
 *   maxConcurrency divided, the remainder to the first replicas by id), read with a heartbeat every second;
 * - a pause it asked for (429/503 with Retry-After): at once here, in the database for the other replicas;
 * - its circuit: open after DELIVERY_CIRCUIT_FAILURES consecutive failures (counted in the database, across
 *   replicas), when nothing goes but one probe, sent by the replica that takes it (startProbe).
 * Every change of state is made by SubscriberHealth, which records it; this class only applies what it returns.
 */
@Injectable()
export class SubscriberGates {
  private readonly logger = new Logger(SubscriberGates.name);
  private readonly log = new RateLimitedLog(nestSink(this.logger));
  readonly replicaId = randomUUID();
  private replicas = 1;
  private rank = 0;
  private gates = new Map<string, Gate>();
  private readonly buckets = new Map<string, TokenBucket>();
  /** Circuits whose probe this replica holds: until when (then another replica may take it), and if it was sent. */
  private readonly probing = new Map<string, Probe>();
  /** Failures here since the last heartbeat, per subscriber: its next success must be counted too. */
  private readonly failing = new Map<string, number>();
  /**
   * Subscribers whose failures here reach DELIVERY_CIRCUIT_FAILURES with what the database last said: shut at once,
   * until the breaker's statement says whether their circuit opened (else the slots freed meanwhile would spend
   * more attempts on a subscriber that is down).
   */
  private readonly opening = new Set<string>();
  /** Every subscriber whose circuit was seen here, for the metric (closed once it is no longer listed). */
  private readonly seen = new Set<string>();
  private readonly health: WriteCoalescer<AnsweredAttempt, HealthTransition[]>;
  private readonly policy: BreakerPolicy;
  private listener: GateListener = { shut: () => undefined, opened: () => undefined };
  /** When a pause ends, the dispatcher claims the subscriber's deliveries again without waiting for a poll. */
  private readonly pauseEnds = new WakeTimers<string>(() => this.listener.opened());
  private refreshing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
    @Inject(SUBSCRIBER_HEALTH) private readonly store: SubscriberHealth,
    metrics: WorkerMetrics,
  ) {
    this.policy = {
      failuresToOpen: config.DELIVERY_CIRCUIT_FAILURES,
      probeMinMs: config.DELIVERY_CIRCUIT_PROBE_MIN,
      probeMaxMs: config.DELIVERY_CIRCUIT_PROBE_MAX,
      disableAfterMs: config.DELIVERY_DISABLE_AFTER,
    };
    // Outcomes are counted in batches, one statement for all answered meanwhile (one at a time, so in order).
    this.health = new WriteCoalescer((attempts) => this.record(attempts), 500, undefined, 10);
    metrics.watchSubscribers(
      () => this.circuits(),
      () => [...this.gates.values()].filter((g) => isPaused(g, Date.now())).length,
    );
  }

  /** Counts one batch of answers against the breaker and applies what its statement changed. */
  private async record(attempts: AnsweredAttempt[]): Promise<HealthTransition[]> {
    let transitions: HealthTransition[] = [];
    try {
      transitions = await this.store.recordOutcomes(summarizeOutcomes(attempts), this.policy);
      this.apply(transitions, Date.now());
    } finally {
      // Shut in advance, and not opened after all (a success elsewhere, or the statement failed): open again.
      const opened = new Set(transitions.filter((t) => t.kind === 'circuit_opened').map((t) => t.subscriptionId));
      const reopen = attempts.map((a) => a.subscriptionId).filter((id) => this.opening.delete(id) && !opened.has(id));
      if (reopen.length > 0) this.listener.opened();
    }
    return transitions;
  }

  listen(listener: GateListener) {
    this.listener = listener;
  }

  /** Says this replica is alive and reads every limited or unhealthy subscriber; takes the probes that are due. */
  async refresh(now = Date.now()): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      await this.refreshOnce(now);
    } finally {
      this.refreshing = false;
    }
  }

  private async refreshOnce(now: number): Promise<void> {
    let snapshot: Awaited<ReturnType<SubscriberHealth['heartbeat']>>;
    try {
      snapshot = await this.store.heartbeat(this.replicaId, LIVE_MS);
    } catch (err) {
      // What was known stays in force; pauses and open circuits still hold, and deliveries still go otherwise.
      this.log.log('warn', 'heartbeat', {}, `reading subscribers' limits and health failed: ${(err as Error).message}`);
      return;
    }
    const wasShut = new Set([...this.gates.keys(), ...this.probing.keys()].filter((id) => this.shut(id, now)));
    this.replicas = snapshot.replicas.length;
    this.rank = Math.max(0, snapshot.replicas.indexOf(this.replicaId));
    this.gates = mergeSnapshot(this.gates, snapshot.gates, Date.now(), now);
    this.failing.clear();
    for (const [id, g] of this.gates) {
      if (g.circuit !== 'closed') this.seen.add(id);
      this.rebucket(id, now);
    }
    for (const id of this.buckets.keys()) if (!this.gates.has(id)) this.buckets.delete(id);
    for (const [id, p] of this.probing) if (probeLapsed(p, this.gates.get(id), now)) this.probing.delete(id);
    for (const [id, g] of this.gates) {
      if (g.pausedUntil) this.pauseEnds.at(id, g.pausedUntil);
      if (g.circuit !== 'closed' && g.probeAt !== null && g.probeAt <= now && !this.probing.has(id))
        await this.takeProbe(id);
    }
    for (const id of [...this.gates.keys(), ...this.probing.keys()])
      if (!wasShut.has(id) && this.shut(id, now)) this.listener.shut(id);
    if ([...wasShut].some((id) => !this.shut(id, now))) this.listener.opened();
  }

  private async takeProbe(id: string) {
    // Held as long as a delivery could wait for it here: claimed, sent and recorded.
    const holdMs = 2 * this.config.DELIVERY_TIMEOUT_MS + 5000;
    try {
      if (!(await this.store.startProbe(id, holdMs))) return;
    } catch (err) {
      this.log.log('warn', 'probe', {}, `taking a circuit's probe failed: ${(err as Error).message}`);
      return;
    }
    this.probing.set(id, { until: Date.now() + holdMs, sent: false });
    const g = this.gates.get(id);
    if (g) g.circuit = 'half_open';
    this.logger.log(`subscription ${id}: circuit half-open, sending one probe`);
    this.listener.opened();
  }

  /**
   * A delivery brings its subscriber's limits as its claim read them: a limit set a moment ago applies from the
   * first delivery, not from the next heartbeat.
   */
  learn(d: ClaimedDelivery, now = Date.now()) {
    const gate = d.limits && withLimits(this.gates.get(d.subscriptionId), d.limits);
    if (!gate) return;
    this.gates.set(d.subscriptionId, gate);
    this.rebucket(d.subscriptionId, now);
  }

  /** The subscriber's token bucket at its rate here (rateOf), as its gate now says; none without a rate limit. */
  private rebucket(id: string, now: number) {
    const rate = this.rateOf(id);
    if (rate === null) this.buckets.delete(id);
    else if (this.buckets.has(id)) this.buckets.get(id)!.setRate(rate, now);
    else this.buckets.set(id, new TokenBucket(rate, now));
  }

  /** Stops timers and says this replica is gone, so that the others take its shares at once. */
  async stop() {
    this.pauseEnds.stop();
    await this.store.leave(this.replicaId).catch(() => undefined);
  }

  /** Nothing of this subscriber may start here now (see isShut), or its circuit is about to open (`opening`). */
  shut(subscriptionId: string, now = Date.now()): boolean {
    if (this.opening.has(subscriptionId)) return true;
    const probe = this.probing.get(subscriptionId);
    return isShut(this.gates.get(subscriptionId), probe, this.concurrencyCap(subscriptionId), now);
  }

  /** Requests this replica may have on the wire to the subscriber at once. */
  concurrencyCap(subscriptionId: string): number {
    const own = this.config.DELIVERY_CONCURRENCY_PER_SUBSCRIPTION;
    return concurrencyCapOf(this.gates.get(subscriptionId), own, this.replicas, this.rank);
  }

  /** Deliveries a second this replica may start for the subscriber (its share of maxDeliveriesPerSecond), if limited. */
  rateOf(subscriptionId: string): number | null {
    const limit = this.gates.get(subscriptionId)?.maxDeliveriesPerSecond;
    return limit == null ? null : rateShare(limit, this.replicas);
  }

  /** Deliveries this replica takes on for the subscriber (see admissionCapOf); beyond it, they wait as rows. */
  admissionCap(subscriptionId: string): number {
    return admissionCapOf(this.gates.get(subscriptionId), this.concurrencyCap(subscriptionId), this.replicas);
  }

  /** Subscribers whose deliveries this replica must not take on now (left out of its claims and fan-outs). */
  excluded(now = Date.now()): string[] {
    return [...new Set([...this.gates.keys(), ...this.probing.keys()])].filter((id) => this.shut(id, now));
  }

  /**
   * Whether one more of the subscriber's deliveries may start now, given `inFlight` on the wire here; takes a token
   * of its rate and the probe, if it has them. When only the rate holds it back, `retryInMs` says when to look again.
   */
  tryStart(subscriptionId: string, inFlight: number, now = Date.now()): { start: boolean; retryInMs?: number } {
    if (this.shut(subscriptionId, now) || inFlight >= this.concurrencyCap(subscriptionId)) return { start: false };
    const bucket = this.buckets.get(subscriptionId);
    if (bucket && !bucket.take(now)) return { start: false, retryInMs: Math.max(1, bucket.waitMs(now)) };
    const probe = this.probing.get(subscriptionId);
    if (probe) probe.sent = true;
    return { start: true };
  }

  /**
   * An attempt was answered. A 429/503 with Retry-After pauses the subscriber here at once (true: set its other
   * deliveries aside) and, for the other replicas, in the database. Failures, and a success that ends them, are
   * counted by the breaker; a failure that will open its circuit shuts the subscriber here at once (true).
   */
  answered(subscriptionId: string, result: Omit<AnsweredAttempt, 'subscriptionId'>, now = Date.now()): boolean {
    const pauseMs = pauseAsked(result, this.config.DELIVERY_PAUSE_MAX);
    const g = this.gates.get(subscriptionId);
    const failed = isBreakerFailure(result);
    const { counts, failingHere, opening } = countAnswer(g, this.failing.get(subscriptionId), failed, this.policy);
    if (failingHere === undefined) this.failing.delete(subscriptionId);
    else this.failing.set(subscriptionId, failingHere);
    if (opening) this.opening.add(subscriptionId);
    if (counts)
      this.health.add({ subscriptionId, ...result }).catch((err: Error) => {
        this.log.log('warn', 'health', {}, `counting delivery outcomes for the circuit breaker failed: ${err.message}`);
      });
    if (pauseMs === null) return opening;
    const paused = pauseGate(this.gates.get(subscriptionId), pauseMs, now);
    this.gates.set(subscriptionId, paused);
    this.pauseEnds.at(subscriptionId, paused.pausedUntil);
    const reason = `the subscriber answered ${failureText(result)} with Retry-After`;
    this.store.pause(subscriptionId, pauseMs, reason).catch((err: Error) => {
      this.log.log('warn', 'pause', {}, `recording a subscriber's pause failed: ${err.message}`);
    });
    this.logger.log(`subscription ${subscriptionId} asked to wait: paused for ${Math.round(pauseMs / 1000)} s`);
    return true;
  }

  /** Applies what the breaker changed (its statement recorded it): a shut gate sets deliveries aside. */
  private apply(transitions: HealthTransition[], now: number) {
    for (const t of transitions) {
      const { gate, change } = applyTransition(this.gates.get(t.subscriptionId), t, now);
      this.gates.set(t.subscriptionId, gate);
      this.seen.add(t.subscriptionId);
      this.probing.delete(t.subscriptionId);
      if (!change) continue;
      this.logger[change.level](change.message);
      if (change.effect === 'opened') this.listener.opened();
      else this.listener.shut(t.subscriptionId);
    }
  }

  /** Each subscriber's circuit as last known here, for the metric. */
  circuits(): Map<string, CircuitState> {
    return new Map([...this.seen].map((id) => [id, this.gates.get(id)?.circuit ?? 'closed']));
  }
}
