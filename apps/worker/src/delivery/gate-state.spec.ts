import { SubscriberGate } from '@app/delivery';
import {
  admissionCapOf,
  applyTransition,
  closedGate,
  concurrencyCapOf,
  countAnswer,
  Gate,
  isShut,
  mergeSnapshot,
  pauseGate,
  probeLapsed,
  withLimits,
} from './gate-state';

const gate = (over: Partial<Gate> = {}): Gate => ({ ...closedGate(), ...over });
const known = (over: Partial<SubscriberGate> = {}): SubscriberGate => ({
  subscriptionId: 's1',
  maxDeliveriesPerSecond: null,
  maxConcurrency: null,
  pausedForMs: null,
  circuit: 'closed',
  probeInMs: null,
  consecutiveFailures: 0,
  ...over,
});

describe('mergeSnapshot', () => {
  const at = 10_000;
  const now = 9_990;

  it('takes what the heartbeat read, its times from when it was read', () => {
    const snapshot = [
      known({ maxDeliveriesPerSecond: 7, maxConcurrency: 3, circuit: 'open', probeInMs: 2000, consecutiveFailures: 5 }),
    ];
    expect(mergeSnapshot(new Map(), snapshot, at, now).get('s1')).toEqual({
      maxDeliveriesPerSecond: 7,
      maxConcurrency: 3,
      pausedUntil: null,
      circuit: 'open',
      probeAt: 12_000,
      consecutiveFailures: 5,
    });
  });

  it('keeps a later local pause over the earlier one the heartbeat knows', () => {
    const old = new Map([['s1', gate({ pausedUntil: 60_000 })]]);
    const merged = mergeSnapshot(old, [known({ pausedForMs: 5000 })], at, now);
    expect(merged.get('s1')!.pausedUntil).toBe(60_000);
  });

  it("takes the heartbeat's pause when it is the later", () => {
    const old = new Map([['s1', gate({ pausedUntil: 11_000 })]]);
    const merged = mergeSnapshot(old, [known({ pausedForMs: 5000 })], at, now);
    expect(merged.get('s1')!.pausedUntil).toBe(15_000);
  });

  it('keeps a pause taken here whose statement has not landed, with nothing else of the old gate', () => {
    const old = new Map([['s2', gate({ pausedUntil: 20_000, maxConcurrency: 4, circuit: 'open', probeAt: 1 })]]);
    const merged = mergeSnapshot(old, [], at, now);
    expect(merged.get('s2')).toEqual(gate({ pausedUntil: 20_000 }));
  });

  it('forgets a gate the heartbeat no longer lists once its pause is over', () => {
    const old = new Map([
      ['ended', gate({ pausedUntil: now })],
      ['limited', gate({ maxDeliveriesPerSecond: 5 })],
    ]);
    expect([...mergeSnapshot(old, [], at, now).keys()]).toEqual([]);
  });

  it('leaves the old gates as they were', () => {
    const before = gate({ pausedUntil: 60_000 });
    const old = new Map([['s1', before]]);
    const merged = mergeSnapshot(old, [known({ circuit: 'open' })], at, now);
    expect(merged.get('s1')).not.toBe(before);
    expect(before.circuit).toBe('closed');
  });
});

describe('applyTransition', () => {
  const now = 1_000;

  it('circuit_closed closes the circuit and resets failures and probeAt, and claims the subscriber again', () => {
    const { gate: g, change } = applyTransition(
      gate({ circuit: 'half_open', consecutiveFailures: 9, probeAt: 500, maxConcurrency: 2 }),
      { subscriptionId: 's1', kind: 'circuit_closed' },
      now,
    );
    expect(g).toEqual(gate({ circuit: 'closed', consecutiveFailures: 0, probeAt: null, maxConcurrency: 2 }));
    expect(change).toEqual({
      effect: 'opened',
      level: 'log',
      message: 'subscription s1: circuit closed, its backlog goes out in order',
    });
  });

  it('circuit_opened opens the circuit with its probe at now + forMs, and shuts the subscriber', () => {
    const { gate: g, change } = applyTransition(
      undefined,
      { subscriptionId: 's1', kind: 'circuit_opened', forMs: 10_000, reason: 'HTTP 500' },
      now,
    );
    expect(g).toEqual(gate({ circuit: 'open', probeAt: 11_000 }));
    expect(change).toEqual({
      effect: 'shut',
      level: 'warn',
      message: 'subscription s1: circuit opened (HTTP 500); next probe in 10 s',
    });
  });

  it('probe_failed opens the circuit again, with a reason even when the statement gave none', () => {
    const { gate: g, change } = applyTransition(
      gate({ circuit: 'half_open' }),
      { subscriptionId: 's1', kind: 'probe_failed', forMs: 20_400, reason: null },
      now,
    );
    expect(g.circuit).toBe('open');
    expect(g.probeAt).toBe(21_400);
    expect(change?.message).toBe('subscription s1: circuit open again, probe failed (failing); next probe in 20 s');
  });

  it('disabled opens the circuit with no probe, and shuts the subscriber', () => {
    const { gate: g, change } = applyTransition(
      gate({ circuit: 'open', probeAt: 5_000 }),
      { subscriptionId: 's1', kind: 'disabled', reason: 'answered 410 Gone' },
      now,
    );
    expect(g.circuit).toBe('open');
    expect(g.probeAt).toBeNull();
    expect(change).toEqual({ effect: 'shut', level: 'warn', message: 'subscription s1 disabled: answered 410 Gone' });
  });

  it('a pause changes nothing here: the answer that asked for it paused the subscriber already', () => {
    const before = gate({ pausedUntil: 3_000 });
    const { gate: g, change } = applyTransition(before, { subscriptionId: 's1', kind: 'paused', forMs: 2_000 }, now);
    expect(g).toEqual(before);
    expect(change).toBeNull();
  });

  it('leaves the gate it was given as it was', () => {
    const before = gate({ circuit: 'open', probeAt: 5_000 });
    applyTransition(before, { subscriptionId: 's1', kind: 'circuit_closed' }, now);
    expect(before).toEqual(gate({ circuit: 'open', probeAt: 5_000 }));
  });
});

describe('pauseGate', () => {
  it('pauses a subscriber not known, from now', () => {
    expect(pauseGate(undefined, 5_000, 1_000)).toEqual(gate({ pausedUntil: 6_000 }));
  });

  it('keeps a pause that ends later, and extends one that ends sooner', () => {
    expect(pauseGate(gate({ pausedUntil: 60_000 }), 5_000, 1_000).pausedUntil).toBe(60_000);
    expect(pauseGate(gate({ pausedUntil: 2_000 }), 5_000, 1_000).pausedUntil).toBe(6_000);
  });

  it("keeps the gate's limits and circuit", () => {
    const g = pauseGate(gate({ maxConcurrency: 3, circuit: 'open', probeAt: 9 }), 1, 0);
    expect(g).toEqual(gate({ maxConcurrency: 3, circuit: 'open', probeAt: 9, pausedUntil: 1 }));
  });
});

describe('withLimits', () => {
  it('is null when the limits are the ones known, or none for a subscriber not known', () => {
    expect(withLimits(gate({ maxConcurrency: 2 }), { maxDeliveriesPerSecond: null, maxConcurrency: 2 })).toBeNull();
    expect(withLimits(undefined, { maxDeliveriesPerSecond: null, maxConcurrency: null })).toBeNull();
  });

  it('sets new limits and keeps the rest of the gate', () => {
    const g = withLimits(gate({ pausedUntil: 7, circuit: 'open' }), { maxDeliveriesPerSecond: 4, maxConcurrency: 1 });
    expect(g).toEqual(gate({ pausedUntil: 7, circuit: 'open', maxDeliveriesPerSecond: 4, maxConcurrency: 1 }));
  });

  it('clears limits that were lifted', () => {
    const g = withLimits(gate({ maxDeliveriesPerSecond: 4 }), { maxDeliveriesPerSecond: null, maxConcurrency: null });
    expect(g).toEqual(gate());
  });
});

describe('concurrencyCapOf and admissionCapOf', () => {
  it("takes the worker's own bound, or this replica's share of maxConcurrency if smaller", () => {
    expect(concurrencyCapOf(undefined, 8, 3, 0)).toBe(8);
    expect(concurrencyCapOf(gate({ maxConcurrency: 5 }), 8, 3, 0)).toBe(2);
    expect(concurrencyCapOf(gate({ maxConcurrency: 5 }), 8, 3, 2)).toBe(1);
    expect(concurrencyCapOf(gate({ maxConcurrency: 50 }), 8, 3, 0)).toBe(8);
  });

  it('allows one request, the probe, while the circuit is not closed', () => {
    expect(concurrencyCapOf(gate({ circuit: 'half_open', maxConcurrency: 5 }), 8, 1, 0)).toBe(1);
    expect(admissionCapOf(gate({ circuit: 'open' }), 8, 1)).toBe(1);
  });

  it('admits twice the concurrency, at most what the rate share sends in a second, at least one', () => {
    expect(admissionCapOf(undefined, 8, 1)).toBe(16);
    expect(admissionCapOf(gate({ maxDeliveriesPerSecond: 5 }), 8, 2)).toBe(3);
    expect(admissionCapOf(gate({ maxDeliveriesPerSecond: 1 }), 8, 4)).toBe(1);
  });
});

describe('isShut', () => {
  const now = 1_000;

  it('is open for a subscriber not known, and shut while paused', () => {
    expect(isShut(undefined, undefined, 0, now)).toBe(false);
    expect(isShut(gate({ pausedUntil: now + 1 }), undefined, 8, now)).toBe(true);
    expect(isShut(gate({ pausedUntil: now }), undefined, 8, now)).toBe(false);
  });

  it('lets a circuit that is not closed through only with a probe held here and not yet sent', () => {
    const half = gate({ circuit: 'half_open' });
    expect(isShut(half, undefined, 1, now)).toBe(true);
    expect(isShut(half, { until: 5_000, sent: false }, 1, now)).toBe(false);
    expect(isShut(half, { until: 5_000, sent: true }, 1, now)).toBe(true);
  });

  it('is shut when this replica has no share of maxConcurrency', () => {
    expect(isShut(gate({ maxConcurrency: 1 }), undefined, 0, now)).toBe(true);
    expect(isShut(gate({ maxConcurrency: 1 }), undefined, 1, now)).toBe(false);
  });
});

describe('probeLapsed', () => {
  it('lets a probe go when its time is up, its gate is gone or its circuit is no longer half-open', () => {
    const held = { until: 2_000, sent: false };
    expect(probeLapsed(held, gate({ circuit: 'half_open' }), 1_999)).toBe(false);
    expect(probeLapsed(held, gate({ circuit: 'half_open' }), 2_000)).toBe(true);
    expect(probeLapsed(held, undefined, 0)).toBe(true);
    expect(probeLapsed(held, gate({ circuit: 'open' }), 0)).toBe(true);
  });
});

describe('countAnswer', () => {
  const policy = { failuresToOpen: 3 };

  it('does not count a success of a healthy subscriber', () => {
    expect(countAnswer(undefined, undefined, false, policy)).toEqual({
      counts: false,
      failingHere: undefined,
      opening: false,
    });
  });

  it('counts a success that ends failures, here or in the database, and clears those here', () => {
    expect(countAnswer(undefined, 2, false, policy)).toEqual({ counts: true, failingHere: undefined, opening: false });
    expect(countAnswer(gate({ consecutiveFailures: 1 }), undefined, false, policy).counts).toBe(true);
    expect(countAnswer(gate({ circuit: 'half_open' }), undefined, false, policy).counts).toBe(true);
  });

  it('adds a failure to those here, and opens once they reach the threshold with the database', () => {
    expect(countAnswer(gate({ consecutiveFailures: 1 }), undefined, true, policy)).toEqual({
      counts: true,
      failingHere: 1,
      opening: false,
    });
    expect(countAnswer(gate({ consecutiveFailures: 1 }), 1, true, policy)).toEqual({
      counts: true,
      failingHere: 2,
      opening: true,
    });
  });

  it('does not open a circuit that is not closed: the probe decides', () => {
    expect(countAnswer(gate({ circuit: 'half_open', consecutiveFailures: 5 }), 4, true, policy).opening).toBe(false);
  });
});
