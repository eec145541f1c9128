// What SubscriberGates knows of a subscriber, and the rules that change it: plain functions of the state and the
// time, no timers, no logging and no database, so that each rule is tested alone (gate-state.spec.ts). The class
// keeps everything that has an effect: it logs, wakes the dispatcher and records what these return.
import {
  BreakerPolicy,
  CircuitState,
  concurrencyShare,
  HealthTransition,
  rateShare,
  SubscriberGate,
} from '@app/delivery';

/** A subscriber as this replica knows it; times by this process's clock. */
export interface Gate {
  maxDeliveriesPerSecond: number | null;
  maxConcurrency: number | null;
  pausedUntil: number | null;
  circuit: CircuitState;
  probeAt: number | null;
  consecutiveFailures: number;
}

/** A subscriber with no limit, no pause and a closed circuit. */
export const closedGate = (): Gate => ({
  maxDeliveriesPerSecond: null,
  maxConcurrency: null,
  pausedUntil: null,
  circuit: 'closed',
  probeAt: null,
  consecutiveFailures: 0,
});

/** A circuit's probe that this replica holds: until when (then another replica may take it), and if it was sent. */
export interface Probe {
  until: number;
  sent: boolean;
}

/** Whether the subscriber is still paused at `now` (a gate not known is not). */
export const isPaused = (g: Gate | undefined, now: number): boolean => (g?.pausedUntil ?? 0) > now;

/**
 * The gates after a heartbeat: what every replica knows (`snapshot`, its times from `at`, when it was read), with
 * the pauses taken here that the database does not know yet. Every gate is new: `old` is left as it was.
 */
export function mergeSnapshot(
  old: ReadonlyMap<string, Gate>,
  snapshot: readonly SubscriberGate[],
  at: number,
  now: number,
): Map<string, Gate> {
  const gates = new Map<string, Gate>(
    snapshot.map((g) => [
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
    if (!gates.has(id) && isPaused(g, now)) gates.set(id, { ...closedGate(), pausedUntil: g.pausedUntil });
  return gates;
}

/**
 * The gate with the limits a claim read (a limit set a moment ago applies from the first delivery, not from the
 * next heartbeat), or null when they are what is known already, or there are none for a subscriber not known.
 */
export function withLimits(
  g: Gate | undefined,
  limits: Pick<Gate, 'maxDeliveriesPerSecond' | 'maxConcurrency'>,
): Gate | null {
  const { maxDeliveriesPerSecond, maxConcurrency } = limits;
  if (g?.maxDeliveriesPerSecond === maxDeliveriesPerSecond && g.maxConcurrency === maxConcurrency) return null;
  if (!g && maxDeliveriesPerSecond === null && maxConcurrency === null) return null;
  return { ...(g ?? closedGate()), maxDeliveriesPerSecond, maxConcurrency };
}

/** The subscriber asked to wait `ms` from `now`: paused until then, or later if it already was. */
export function pauseGate(g: Gate | undefined, ms: number, now: number): Gate & { pausedUntil: number } {
  const gate = g ?? closedGate();
  return { ...gate, pausedUntil: Math.max(gate.pausedUntil ?? 0, now + ms) };
}

/** What the dispatcher does when a subscriber's gate shuts (set its deliveries aside) or opens (claim again). */
export interface GateListener {
  shut(subscriptionId: string): void;
  opened(): void;
}

/** What a breaker transition means here: which of the GateListener's to call, and the log line. */
export interface GateChange {
  effect: 'opened' | 'shut';
  level: 'log' | 'warn';
  message: string;
}

/**
 * A subscriber's gate after one breaker transition (its statement recorded it), from `now`; `change` is null when
 * nothing here changes with it (a pause: the answer that asked for it paused the subscriber here already).
 */
export function applyTransition(
  g: Gate | undefined,
  t: HealthTransition,
  now: number,
): { gate: Gate; change: GateChange | null } {
  const gate = g ?? closedGate();
  const id = t.subscriptionId;
  if (t.kind === 'circuit_closed')
    return {
      gate: { ...gate, circuit: 'closed', consecutiveFailures: 0, probeAt: null },
      change: {
        effect: 'opened',
        level: 'log',
        message: `subscription ${id}: circuit closed, its backlog goes out in order`,
      },
    };
  if (t.kind === 'circuit_opened' || t.kind === 'probe_failed')
    return {
      gate: { ...gate, circuit: 'open', probeAt: now + (t.forMs ?? 0) },
      change: {
        effect: 'shut',
        level: 'warn',
        message:
          `subscription ${id}: circuit ${t.kind === 'circuit_opened' ? 'opened' : 'open again, probe failed'}` +
          ` (${t.reason ?? 'failing'}); next probe in ${Math.round((t.forMs ?? 0) / 1000)} s`,
      },
    };
  // No probe: a disabled subscription gets nothing until an admin enables it again.
  if (t.kind === 'disabled')
    return {
      gate: { ...gate, circuit: 'open', probeAt: null },
      change: { effect: 'shut', level: 'warn', message: `subscription ${id} disabled: ${t.reason}` },
    };
  return { gate, change: null };
}

/**
 * Requests this replica may have on the wire to the subscriber at once: `own` (the worker's bound per subscriber),
 * its share of the subscriber's maxConcurrency, or the one probe while its circuit is not closed.
 */
export function concurrencyCapOf(g: Gate | undefined, own: number, replicas: number, rank: number): number {
  if (!g) return own;
  if (g.circuit !== 'closed') return 1;
  return g.maxConcurrency === null ? own : Math.min(own, concurrencyShare(g.maxConcurrency, replicas, rank));
}

/**
 * Deliveries this replica takes on for the subscriber (on the wire and queued): twice what it may send at once
 * (`concurrencyCap`), no more than a rate-limited one can send in about a second, one while a probe is out. Beyond
 * it, its deliveries wait as rows.
 */
export function admissionCapOf(g: Gate | undefined, concurrencyCap: number, replicas: number): number {
  if (g && g.circuit !== 'closed') return 1;
  let cap = 2 * concurrencyCap;
  if (g?.maxDeliveriesPerSecond != null)
    cap = Math.min(cap, Math.max(1, Math.ceil(rateShare(g.maxDeliveriesPerSecond, replicas))));
  return cap;
}

/**
 * Nothing of this subscriber may start here now: paused, its circuit open (or half-open with the probe held by
 * another replica, or sent already), or no share of its maxConcurrency for this replica (`concurrencyCap` 0).
 */
export function isShut(g: Gate | undefined, probe: Probe | undefined, concurrencyCap: number, now: number): boolean {
  if (!g) return false;
  if (isPaused(g, now)) return true;
  if (g.circuit !== 'closed') return !probe || probe.sent;
  return concurrencyCap === 0;
}

/** A probe held here is let go once its time is up, or when the heartbeat no longer says its circuit is half-open. */
export const probeLapsed = (p: Probe, g: Gate | undefined, now: number): boolean =>
  p.until <= now || !g || g.circuit !== 'half_open';

/**
 * How an answer counts against the breaker, given the failures here since the last heartbeat (`failingHere`):
 * whether the breaker must count it (a failure, or a success that ends failures), the failures here after it
 * (undefined: none), and whether they reach DELIVERY_CIRCUIT_FAILURES with what the database last said, so that
 * the circuit will open.
 */
export function countAnswer(
  g: Gate | undefined,
  failingHere: number | undefined,
  failed: boolean,
  { failuresToOpen }: Pick<BreakerPolicy, 'failuresToOpen'>,
): { counts: boolean; failingHere: number | undefined; opening: boolean } {
  const counts =
    failed || failingHere !== undefined || (g !== undefined && (g.consecutiveFailures > 0 || g.circuit !== 'closed'));
  if (!failed) return { counts, failingHere: undefined, opening: false };
  const n = (failingHere ?? 0) + 1;
  const opening = (g?.circuit ?? 'closed') === 'closed' && (g?.consecutiveFailures ?? 0) + n >= failuresToOpen;
  return { counts, failingHere: n, opening };
}
