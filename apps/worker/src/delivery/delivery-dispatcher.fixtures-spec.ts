// Fakes and helpers the dispatcher's specs share (not a spec itself; named *spec.ts to stay out of the build): a
// fake outbox, health, sender and subscriptions, and setup() to wire a dispatcher to them. Importing it registers
// the afterEach that stops them.
import { loadConfig, workerEnvSchema } from '@app/config';
import {
  AttemptRecord,
  ClaimedDelivery,
  HealthTransition,
  LeasedRef,
  OutcomeSummary,
  Outbox,
  SubscriberGate,
  SubscriberHealth,
} from '@app/delivery';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DeliveryInbox } from './delivery-inbox';
import { DeliverySender, SendResult } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';
import { SubscriberGates } from './subscriber-gates';

/**
 * The shared health as a fake: the gates the next heartbeat reads, the pauses asked for, the outcomes counted, and
 * the transitions the next count returns.
 */
export function fakeHealth() {
  const state = {
    gates: [] as SubscriberGate[],
    pauses: [] as { subscriptionId: string; forMs: number }[],
    outcomes: [] as OutcomeSummary[],
    transitions: [] as HealthTransition[],
  };
  const health: SubscriberHealth = {
    heartbeat: async (replicaId) => ({ replicas: [replicaId], gates: state.gates }),
    leave: async () => undefined,
    recordOutcomes: async (outcomes) => {
      state.outcomes.push(...outcomes);
      return state.transitions.splice(0);
    },
    pause: async (subscriptionId, forMs) => {
      state.pauses.push({ subscriptionId, forMs });
      return { subscriptionId, kind: 'paused', forMs };
    },
    startProbe: async () => true,
  };
  return { health, state };
}
import { SubscriberCache } from '../subscribers/subscriber-cache';
import { delivery } from './claimed-delivery.fixture-spec';

export { delivery };

export const ok: SendResult = {
  attemptedAt: new Date().toISOString(),
  status: 204,
  latencyMs: 1,
  error: null,
  responseBody: null,
  retryAfterMs: null,
};

/**
 * A repository whose fan-outs hand out what a test queued (then nothing), which claims no rows, and which
 * remembers what was recorded (each write apart), marked fanned out and released.
 */
export function fakeRepository() {
  const writes: { records: AttemptRecord[] }[] = [];
  const released = { deliveries: [] as string[], events: [] as string[] };
  const db = {
    stalled: null as Promise<void> | null,
    failFor: null as string | null,
    /** Records the database refuses for their data, as PostgreSQL refuses a NUL (22021): the whole statement. */
    refuses: (_r: AttemptRecord) => false,
    /** Leases another claim took after they lapsed: not renewed. */
    lost: new Set<string>(),
  };
  const events: ClaimedDelivery[][] = [];
  const repo = {
    fanOut: jest.fn(async (_limit: number, _defer: string[], _leaseMs: number) => ({
      claimed: events.shift() ?? [],
      more: false,
      deferred: 0,
      deferredFor: [],
    })),
    claimDue: jest.fn(async (): Promise<{ claimed: ClaimedDelivery[]; more: boolean }> => ({
      claimed: [],
      more: false,
    })),
    countPending: async () => ({ deliveries: 0, events: 0 }),
    record: async (records: AttemptRecord[]) => {
      await db.stalled;
      if (records.some((r) => r.delivery.id === db.failFor)) throw new Error('connection terminated');
      if (records.some(db.refuses))
        throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
      writes.push({ records });
    },
    renewLeases: jest.fn(async (held: ClaimedDelivery[], leaseMs: number) => ({
      renewed: new Set(held.filter((d) => !db.lost.has(d.lease.token)).map((d) => d.id)),
      until: Date.now() + leaseMs,
    })),
    releaseLeases: async (ds: LeasedRef[], events: LeasedRef[] = []) => {
      released.deliveries.push(...ds.map((d) => d.id));
      released.events.push(...events.map((e) => e.id));
    },
  } satisfies Outbox; // the port the dispatcher is given: a method it gains is a fake this test must add
  const recorded = () => writes.flatMap((w) => w.records);
  return { repo, writes, recorded, released, events, db, mocks: repo };
}

/** Every dispatcher a test made: stopped after it, even when an assertion failed first (its loop would keep
 * jest from exiting). */
const made: DeliveryDispatcher[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => d.onModuleDestroy()));
});

export function setup(env: Record<string, string> = {}) {
  const concurrency = env.DELIVERY_CONCURRENCY ?? '2';
  const config = loadConfig(workerEnvSchema, {
    DELIVERY_CONCURRENCY: concurrency,
    DELIVERY_WINDOW: String(2 * Number(concurrency)), // small windows: the specs count what fills them
    DELIVERY_POLL_MS: '60000',
    SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    ...env,
  });
  const fake = fakeRepository();
  const sent: string[] = [];
  let answer: (d: ClaimedDelivery) => Promise<SendResult> = async () => ok;
  const sender = { send: async (d: ClaimedDelivery) => (sent.push(d.id), answer(d)) } as unknown as DeliverySender;
  const metrics = new WorkerMetrics();
  const shared = fakeHealth();
  const gates = new SubscriberGates(config, shared.health, metrics);
  /** The subscriptions this worker holds: every one but those in `gone`. */
  const gone = new Set<string>();
  const subscribers = {
    onChange: () => undefined,
    admit: (id: string) => (gone.has(id) ? undefined : { id }),
  } as unknown as SubscriberCache;
  const sut = new DeliveryDispatcher(config, fake.repo, sender, new DeliverySignal(), metrics, gates, subscribers);
  made.push(sut);
  const inbox: DeliveryInbox = sut; // what the consumer sees of it
  /** Starts the loop with these events' deliveries for its first fan-out. */
  const start = (...deliveries: ClaimedDelivery[]) => {
    fake.events.push(deliveries);
    sut.onApplicationBootstrap();
  };
  return {
    ...fake,
    shared,
    gates,
    gone,
    sut,
    inbox,
    sent,
    metrics,
    start,
    hold: (f: (d: ClaimedDelivery) => Promise<SendResult>) => (answer = f),
  };
}

// Long enough for the recorder's linger on an idle machine; `until` for what must have happened (a loaded CI
// machine runs timers late).
export const settle = () => new Promise((r) => setTimeout(r, 60));
export async function until(what: string, done: () => boolean, ms = 5000) {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}
