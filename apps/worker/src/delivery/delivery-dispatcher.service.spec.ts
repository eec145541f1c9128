import { loadConfig, workerEnvSchema } from '@app/config';
import { AttemptRecord, ClaimedDelivery } from '@app/delivery';
import { OutboxRepository } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DeliveryInbox } from './delivery-inbox';
import { DeliverySender, SendResult } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';

const delivery = (id: string, subscriptionId = 's1'): ClaimedDelivery => ({
  id,
  subscriptionId,
  eventId: `event-${id}`,
  plantId: 1,
  body: '{"id":1,"name":"Fern"}',
  eventTime: new Date(),
  hops: 0,
  originEventId: `event-${id}`,
  traceparent: null,
  attempts: 0,
  url: 'http://receiver.test/hook',
  token: null,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});

const ok: SendResult = {
  attemptedAt: new Date().toISOString(),
  status: 204,
  latencyMs: 1,
  error: null,
  responseBody: null,
  retryAfterMs: null,
};

/** A repository that claims nothing and remembers what was recorded and released. */
function fakeRepository() {
  const recorded: AttemptRecord[] = [];
  const released: string[] = [];
  const db = { stalled: null as Promise<void> | null };
  const repo = {
    claimDue: jest.fn(async () => ({ claimed: [], more: false })),
    countPending: async () => 0,
    recordAttempts: async (records: AttemptRecord[]) => {
      await db.stalled;
      recorded.push(...records);
    },
    releaseLeases: async (ids: string[]) => void released.push(...ids),
  };
  return { repo: repo as unknown as OutboxRepository, recorded, released, claimDue: repo.claimDue, db };
}

function setup(env: Record<string, string> = {}) {
  const config = loadConfig(workerEnvSchema, {
    DELIVERY_CONCURRENCY: '2',
    DELIVERY_POLL_MS: '60000',
    SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    ...env,
  });
  const { repo, recorded, released, claimDue, db } = fakeRepository();
  const sent: string[] = [];
  let answer: () => Promise<SendResult> = async () => ok;
  const sender = { send: async (d: ClaimedDelivery) => (sent.push(d.id), answer()) } as unknown as DeliverySender;
  const metrics = new WorkerMetrics();
  const sut = new DeliveryDispatcher(config, repo, sender, new DeliverySignal(), metrics);
  const handoff: DeliveryInbox = sut; // what the consumer sees of it
  return {
    sut,
    handoff,
    recorded,
    released,
    sent,
    claimDue,
    db,
    metrics,
    hold: (f: () => Promise<SendResult>) => (answer = f),
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe(DeliveryDispatcher.name, () => {
  it('sends deliveries handed over by the consumer and records their outcome, without claiming them', async () => {
    const { sut, handoff, recorded, sent, claimDue } = setup();
    handoff.accept([delivery('a'), delivery('b', 's2')], 0);
    await settle();
    expect(sent.sort()).toEqual(['a', 'b']);
    expect(recorded.map((r) => [r.deliveryId, r.outcome.kind]).sort()).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
    ]);
    expect(claimDue).not.toHaveBeenCalled(); // the loop is not started here; nothing needed a claim
    await sut.onModuleDestroy();
  });

  it('offers room for twice its concurrency, less what is queued or on the wire', async () => {
    const { sut, handoff, hold } = setup();
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered); // receivers that do not answer until the end of the test
    expect(handoff.room().limit).toBe(4);
    handoff.accept([delivery('a'), delivery('b'), delivery('c')], 0);
    expect(handoff.room().limit).toBe(1); // two sending, one queued
    expect(handoff.room().leaseMs).toBeGreaterThan(15000); // outlives an attempt's timeout
    answer(ok);
    await sut.onModuleDestroy();
  });

  it('counts answered deliveries whose outcome is not yet written against its room: a slow database slows the intake', async () => {
    const { sut, handoff, db, recorded, metrics } = setup();
    let unstall!: () => void;
    db.stalled = new Promise((r) => (unstall = r));
    handoff.accept([delivery('a'), delivery('b'), delivery('c'), delivery('d')], 0);
    await settle();
    // All four answered; their outcomes wait for the database, and still hold the window.
    expect(handoff.room().limit).toBe(0);
    const scraped = await metrics.registry.getSingleMetricAsString('plant_store_dispatcher_deliveries');
    expect(scraped).toMatch(/state="recording",app="worker"} 4/);
    expect(await metrics.registry.getSingleMetricAsString('plant_store_dispatcher_window')).toMatch(/ 4$/m);
    unstall();
    await settle();
    expect(recorded).toHaveLength(4);
    expect(handoff.room().limit).toBe(4);
    await sut.onModuleDestroy();
  });

  it('keeps its claim loop from spinning while the window is full of outcomes being written', async () => {
    const { sut, handoff, db, claimDue } = setup();
    let unstall!: () => void;
    db.stalled = new Promise((r) => (unstall = r));
    claimDue.mockImplementation(async () => ({ claimed: [], more: true })); // a backlog: each answer wakes the loop
    sut.onApplicationBootstrap(); // the claim loop
    handoff.accept([delivery('a'), delivery('b'), delivery('c'), delivery('d')], 0);
    // A loop with nothing on the wire and no room would never yield: this timer would never fire (before the
    // fix, this test hung, as the worker did at 100 % CPU).
    await settle();
    expect(handoff.room().limit).toBe(0);
    expect(claimDue.mock.calls.length).toBeLessThanOrEqual(3);
    unstall();
    await sut.onModuleDestroy();
  });

  it('hands leases back when deliveries arrive after it stopped, instead of letting them wait for expiry', async () => {
    const { sut, handoff, released, sent } = setup();
    await sut.onModuleDestroy();
    expect(handoff.room().limit).toBe(0);
    handoff.accept([delivery('late')], 0);
    await settle();
    expect(sent).toEqual([]);
    expect(released).toEqual(['late']);
  });
});
