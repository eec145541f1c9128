import { EventEmitter } from 'node:events';
import type { Consumer } from 'kafkajs';
import { ConsumerProgress, ConsumerWatchdog } from './consumer-watchdog';

// A consumer that only emits kafkajs's instrumentation events (their names are the ones kafkajs uses).
const EVENTS = {
  FETCH: 'consumer.fetch',
  FETCH_START: 'consumer.fetch_start',
  HEARTBEAT: 'consumer.heartbeat',
  COMMIT_OFFSETS: 'consumer.commit_offsets',
  GROUP_JOIN: 'consumer.group_join',
  REBALANCING: 'consumer.rebalancing',
  CRASH: 'consumer.crash',
  START_BATCH_PROCESS: 'consumer.start_batch_process',
  END_BATCH_PROCESS: 'consumer.end_batch_process',
};
function fakeConsumer() {
  const em = new EventEmitter();
  const consumer = { events: EVENTS, on: (ev: string, fn: (e: unknown) => void) => em.on(ev, fn) };
  const emit = (ev: keyof typeof EVENTS, payload: object = {}) => em.emit(EVENTS[ev], { payload });
  return { consumer: consumer as unknown as Consumer, emit };
}

describe('ConsumerProgress', () => {
  let now = 0;
  const lag = new Map<number, number>();
  const progress = () => {
    const p = new ConsumerProgress({ stallMs: 30_000, now: () => now, lagOf: (_t, partition) => lag.get(partition) });
    const c = fakeConsumer();
    p.watch(c.consumer);
    return { p, ...c };
  };
  beforeEach(() => {
    now = 1_000_000;
    lag.clear();
  });

  it('gives a new consumer the bound to join its group, then says it never did', () => {
    const { p } = progress();
    now += 30_000;
    expect(p.check()).toBeNull();
    now += 1;
    expect(p.check()).toMatch(/not a member of its consumer group for 30s/);
  });

  it('a member that keeps fetching, or heartbeats while a batch waits on the database, is alive', () => {
    const { p, emit } = progress();
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [0, 1] } });
    for (let i = 0; i < 20; i++) {
      now += 5_000;
      emit('FETCH_START');
      expect(p.check()).toBeNull();
    }
    emit('START_BATCH_PROCESS', { topic: 'plant.created', partition: 0 });
    lag.set(0, 500);
    for (let i = 0; i < 20; i++) {
      now += 3_000;
      emit('HEARTBEAT');
      expect(p.check()).toBeNull();
    }
  });

  it('a member gone silent (the coordinator moved, kafkajs waits for ever) is stuck', () => {
    const { p, emit } = progress();
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [0] } });
    now += 30_001;
    expect(p.check()).toMatch(/no fetch, heartbeat or batch for 30s/);
  });

  it('a membership lost and not regained is stuck, with the last error', () => {
    const { p, emit } = progress();
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [0] } });
    emit('CRASH', { error: new Error('This is not the correct coordinator for this group'), restart: true });
    now += 20_000;
    emit('FETCH_START'); // activity is not membership
    expect(p.check()).toBeNull();
    now += 10_001;
    expect(p.check()).toMatch(/not a member .* for 30s \(last error: This is not the correct coordinator/);
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [0] } });
    expect(p.check()).toBeNull();
  });

  it('an owned partition with lag that is not consumed is stuck, even while fetches go on', () => {
    const { p, emit } = progress();
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [0, 1] } });
    lag.set(1, 0);
    lag.set(0, 42);
    expect(p.check()).toBeNull(); // the watchdog looks every few seconds: it sees the lag from here on
    for (let i = 0; i < 6; i++) {
      now += 5_000;
      emit('FETCH_START');
      emit('START_BATCH_PROCESS', { topic: 'plant.created', partition: 1 });
      emit('END_BATCH_PROCESS', { topic: 'plant.created', partition: 1 });
      if (i < 5) expect(p.check()).toBeNull();
    }
    now += 1;
    expect(p.check()).toMatch(/partition plant.created:0 is 42 records behind and was not consumed for 30s/);
  });

  it('counts unconsumed lag only from when it could be read: an outage is not the consumer’s', () => {
    const { p, emit } = progress();
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [0] } });
    for (let i = 0; i < 8; i++) {
      now += 5_000; // the brokers are away: fetches fail, and so does every lag sample
      emit('FETCH_START');
      expect(p.check()).toBeNull();
    }
    lag.set(0, 42); // they are back: the first sample shows the backlog
    expect(p.check()).toBeNull();
    now += 30_000;
    emit('FETCH_START');
    expect(p.check()).toBeNull();
    now += 1;
    expect(p.check()).toMatch(/42 records behind and was not consumed for 30s/);
  });

  it('lag on a partition another member owns is not this consumer’s', () => {
    const { p, emit } = progress();
    emit('GROUP_JOIN', { memberAssignment: { 'plant.created': [1] } });
    lag.set(0, 42);
    now += 29_000;
    emit('FETCH_START');
    now += 29_000;
    emit('FETCH_START');
    expect(p.check()).toBeNull();
  });
});

describe('ConsumerWatchdog', () => {
  it('rejoins a stuck consumer once at a time, reports the verdict, and judges the new one afresh', async () => {
    let now = 0;
    const verdicts: (string | null)[] = [];
    let replacement: ReturnType<typeof fakeConsumer> | null = null;
    const reasons: string[] = [];
    const dog: ConsumerWatchdog = new ConsumerWatchdog({
      stallMs: 10_000,
      now: () => now,
      onVerdict: (r) => verdicts.push(r),
      rejoin: async (reason) => {
        reasons.push(reason);
        replacement = fakeConsumer();
        dog.track(replacement.consumer);
      },
    });
    const first = fakeConsumer();
    dog.track(first.consumer);
    first.emit('GROUP_JOIN', { memberAssignment: {} });
    now = 5_000;
    await dog.tick();
    expect(reasons).toEqual([]);
    now = 10_001;
    await dog.tick();
    expect(reasons).toEqual([expect.stringMatching(/no fetch, heartbeat or batch/)]);
    replacement!.emit('GROUP_JOIN', { memberAssignment: {} });
    now = 15_000;
    await dog.tick();
    expect(reasons).toHaveLength(1);
    expect(verdicts.at(-1)).toBeNull();
  });
});
