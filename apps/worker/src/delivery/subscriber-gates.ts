import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import {
  AnsweredAttempt,
  BreakerPolicy,
  CircuitState,
  ClaimedDelivery,
  concurrencyShare,
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

/** How often a replica says it is alive and reads its subscribers' limits and health. */
export const HEARTBEAT_MS = 1000;
/** A replica not heard from for this long no longer takes a share of any limit. */
const LIVE_MS = 3 * HEARTBEAT_MS;

/** A subscriber as this replica knows it; times by this process's clock. */
interface Gate {
  maxDeliveriesPerSecond: number | null;
  maxConcurrency: number | null;
  pausedUntil: number | null;
  circuit: CircuitState;
  probeAt: number | null;
  consecutiveFailures: number;
}

/** A subscriber with no limit, no pause and a closed circuit. */
const closedGate = (): Gate => ({
  maxDeliveriesPerSecond: null,
  maxConcurrency: null,
  pausedUntil: null,
  circuit: 'closed',
  probeAt: null,
  consecutiveFailures: 0,
});

/** What the dispatcher does when a subscriber's gate shuts (set its deliveries aside) or opens (claim again). */
export interface GateListener {
  shut(subscriptionId: string): void;
  opened(): void;
}

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
  private readonly probing = new Map<string, { until: number; sent: boolean }>();
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
  private wakeTimers = new Map<string, NodeJS.Timeout>();
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
    this.health = new WriteCoalescer(
      async (attempts) => {
        let transitions: HealthTransition[] = [];
        try {
          transitions = await this.store.recordOutcomes(summarizeOutcomes(attempts), this.policy);
          this.apply(transitions, Date.now());
        } finally {
          // Shut in advance, and not opened after all (a success elsewhere, or the statement failed): open again.
          const opened = new Set(transitions.filter((t) => t.kind === 'circuit_opened').map((t) => t.subscriptionId));
          const reopen = attempts
            .map((a) => a.subscriptionId)
            .filter((id) => this.opening.delete(id) && !opened.has(id));
          if (reopen.length > 0) this.listener.opened();
        }
        return transitions;
      },
      500,
      undefined,
      10,
    );
    metrics.watchSubscribers(
      () => this.circuits(),
      () => [...this.gates.values()].filter((g) => this.pausedUntil(g) > Date.now()).length,
    );
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
    const at = Date.now();
    const old = this.gates;
    this.gates = new Map(
      snapshot.gates.map((g) => [
        g.subscriptionId,
        {
          maxDeliveriesPerSecond: g.maxDeliveriesPerSecond,
          maxConcurrency: g.maxConcurrency,
          // A pause taken here may be later than the database's by a statement: keep the later.
          pausedUntil:
            Math.max(g.pausedForMs === null ? 0 : at + g.pausedForMs, old.get(g.subscriptionId)?.pausedUntil ?? 0) ||
            null,
          circuit: g.circuit,
          probeAt: g.probeInMs === null ? null : at + g.probeInMs,
          consecutiveFailures: g.consecutiveFailures,
        },
      ]),
    );
    // A pause taken here whose statement has not landed yet stays in force.
    for (const [id, g] of old)
      if (!this.gates.has(id) && this.pausedUntil(g) > now)
        this.gates.set(id, { ...closedGate(), pausedUntil: g.pausedUntil });
    this.failing.clear();
    for (const [id, g] of this.gates) {
      if (g.circuit !== 'closed') this.seen.add(id);
      this.rebucket(id, g, now);
    }
    for (const id of this.buckets.keys()) if (!this.gates.has(id)) this.buckets.delete(id);
    for (const [id, p] of this.probing) {
      const g = this.gates.get(id);
      if (p.until <= now || !g || g.circuit !== 'half_open') this.probing.delete(id);
    }
    for (const [id, g] of this.gates) {
      if (g.pausedUntil) this.wakeAt(id, g.pausedUntil);
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
    if (!d.limits) return;
    const { maxDeliveriesPerSecond, maxConcurrency } = d.limits;
    const g = this.gates.get(d.subscriptionId);
    if (g?.maxDeliveriesPerSecond === maxDeliveriesPerSecond && g.maxConcurrency === maxConcurrency) return;
    if (!g && maxDeliveriesPerSecond === null && maxConcurrency === null) return;
    const gate = g ?? closedGate();
    Object.assign(gate, { maxDeliveriesPerSecond, maxConcurrency });
    this.gates.set(d.subscriptionId, gate);
    this.rebucket(d.subscriptionId, gate, now);
  }

  private rebucket(id: string, g: Gate, now: number) {
    const rate = g.maxDeliveriesPerSecond === null ? null : rateShare(g.maxDeliveriesPerSecond, this.replicas);
    if (rate === null) this.buckets.delete(id);
    else if (this.buckets.has(id)) this.buckets.get(id)!.setRate(rate, now);
    else this.buckets.set(id, new TokenBucket(rate, now));
  }

  /** Stops timers and says this replica is gone, so that the others take its shares at once. */
  async stop() {
    for (const t of this.wakeTimers.values()) clearTimeout(t);
    this.wakeTimers.clear();
    await this.store.leave(this.replicaId).catch(() => undefined);
  }

  private pausedUntil(g: Gate | undefined): number {
    return g?.pausedUntil ?? 0;
  }

  /**
   * Nothing of this subscriber may start here now: paused, its circuit open (or half-open with the probe held by
   * another replica, or sent already), or no share of its maxConcurrency for this replica.
   */
  shut(subscriptionId: string, now = Date.now()): boolean {
    if (this.opening.has(subscriptionId)) return true;
    const g = this.gates.get(subscriptionId);
    if (!g) return false;
    if (this.pausedUntil(g) > now) return true;
    if (g.circuit !== 'closed') {
      const probe = this.probing.get(subscriptionId);
      return !probe || probe.sent;
    }
    return this.concurrencyCap(subscriptionId) === 0;
  }

  /** Requests this replica may have on the wire to the subscriber at once. */
  concurrencyCap(subscriptionId: string): number {
    const own = this.config.DELIVERY_CONCURRENCY_PER_SUBSCRIPTION;
    const g = this.gates.get(subscriptionId);
    if (!g) return own;
    if (g.circuit !== 'closed') return 1;
    return g.maxConcurrency === null
      ? own
      : Math.min(own, concurrencyShare(g.maxConcurrency, this.replicas, this.rank));
  }

  /**
   * Deliveries this replica takes on for the subscriber (on the wire and queued): twice what it may send at once,
   * no more than a rate-limited one can send in about a second, one while a probe is out. Beyond it, its
   * deliveries wait as rows.
   */
  admissionCap(subscriptionId: string): number {
    const g = this.gates.get(subscriptionId);
    if (g && g.circuit !== 'closed') return 1;
    let cap = 2 * this.concurrencyCap(subscriptionId);
    if (g?.maxDeliveriesPerSecond != null)
      cap = Math.min(cap, Math.max(1, Math.ceil(rateShare(g.maxDeliveriesPerSecond, this.replicas))));
    return cap;
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
    const failed = isBreakerFailure(result);
    const g = this.gates.get(subscriptionId);
    const counts =
      failed ||
      this.failing.has(subscriptionId) ||
      (g !== undefined && (g.consecutiveFailures > 0 || g.circuit !== 'closed'));
    let opening = false;
    if (failed) {
      const n = (this.failing.get(subscriptionId) ?? 0) + 1;
      this.failing.set(subscriptionId, n);
      opening =
        (g?.circuit ?? 'closed') === 'closed' && (g?.consecutiveFailures ?? 0) + n >= this.policy.failuresToOpen;
      if (opening) this.opening.add(subscriptionId);
    } else if (counts) this.failing.delete(subscriptionId);
    if (counts)
      this.health.add({ subscriptionId, ...result }).catch((err: Error) => {
        this.log.log('warn', 'health', {}, `counting delivery outcomes for the circuit breaker failed: ${err.message}`);
      });
    if (pauseMs === null) return opening;
    this.pause(subscriptionId, pauseMs, now);
    const reason = `the subscriber answered ${failureText(result)} with Retry-After`;
    this.store.pause(subscriptionId, pauseMs, reason).catch((err: Error) => {
      this.log.log('warn', 'pause', {}, `recording a subscriber's pause failed: ${err.message}`);
    });
    this.logger.log(`subscription ${subscriptionId} asked to wait: paused for ${Math.round(pauseMs / 1000)} s`);
    return true;
  }

  private pause(subscriptionId: string, ms: number, now: number) {
    const g = this.gates.get(subscriptionId) ?? closedGate();
    g.pausedUntil = Math.max(g.pausedUntil ?? 0, now + ms);
    this.gates.set(subscriptionId, g);
    this.wakeAt(subscriptionId, g.pausedUntil);
  }

  /** When a pause ends, the dispatcher claims the subscriber's deliveries again without waiting for a poll. */
  private wakeAt(subscriptionId: string, at: number) {
    clearTimeout(this.wakeTimers.get(subscriptionId));
    const t = setTimeout(
      () => {
        this.wakeTimers.delete(subscriptionId);
        this.listener.opened();
      },
      Math.max(0, at - Date.now()) + 5,
    );
    t.unref();
    this.wakeTimers.set(subscriptionId, t);
  }

  /** Applies what the breaker changed (its statement recorded it): a shut gate sets deliveries aside. */
  private apply(transitions: HealthTransition[], now: number) {
    for (const t of transitions) {
      const g = this.gates.get(t.subscriptionId) ?? closedGate();
      this.gates.set(t.subscriptionId, g);
      this.seen.add(t.subscriptionId);
      this.probing.delete(t.subscriptionId);
      if (t.kind === 'circuit_closed') {
        g.circuit = 'closed';
        g.consecutiveFailures = 0;
        g.probeAt = null;
        this.logger.log(`subscription ${t.subscriptionId}: circuit closed, its backlog goes out in order`);
        this.listener.opened();
      } else if (t.kind === 'circuit_opened' || t.kind === 'probe_failed') {
        g.circuit = 'open';
        g.probeAt = now + (t.forMs ?? 0);
        this.logger.warn(
          `subscription ${t.subscriptionId}: circuit ${t.kind === 'circuit_opened' ? 'opened' : 'open again, probe failed'}` +
            ` (${t.reason ?? 'failing'}); next probe in ${Math.round((t.forMs ?? 0) / 1000)} s`,
        );
        this.listener.shut(t.subscriptionId);
      } else if (t.kind === 'disabled') {
        this.logger.warn(`subscription ${t.subscriptionId} disabled: ${t.reason}`);
        g.circuit = 'open';
        g.probeAt = null;
        this.listener.shut(t.subscriptionId);
      }
    }
  }

  /** Each subscriber's circuit as last known here, for the metric. */
  circuits(): Map<string, CircuitState> {
    return new Map([...this.seen].map((id) => [id, this.gates.get(id)?.circuit ?? 'closed']));
  }
}
