import { Logger } from '@nestjs/common';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { delivery, ok, settle, setup, until } from './delivery-dispatcher.fixtures-spec';
import { SendResult } from './delivery-sender';

describe(DeliveryDispatcher.name, () => {
  it("sends an event's deliveries from memory and records them; the last answered carries the event's subscribers", async () => {
    const { sut, writes, sent, start, hold } = setup();
    hold(async (d) => (d.id === 'a' ? new Promise((r) => setTimeout(() => r(ok), 15)) : ok)); // a answers last
    start(delivery('a', 's1', 'e1'), delivery('b', 's2', 'e1'), delivery('c', 's1', 'e2'));
    await until('three outcomes written', () => writes.flatMap((w) => w.records).length === 3);
    expect(sent.sort()).toEqual(['a', 'b', 'c']);
    const completes = Object.fromEntries(writes.flatMap((w) => w.records).map((r) => [r.delivery.id, r.completes]));
    expect(completes).toEqual({ a: ['s1', 's2'], b: undefined, c: ['s1'] });
    expect(writes.flatMap((w) => w.records).map((r) => r.outcome.kind)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    await sut.onModuleDestroy();
  });

  it('sends nothing to a subscription its copy of them no longer holds; the event is left to its lease', async () => {
    const { sut, writes, sent, start, gone } = setup();
    gone.add('s2');
    start(delivery('a', 's1', 'e1'), delivery('b', 's2', 'e1'));
    await until('one outcome written', () => writes.flatMap((w) => w.records).length === 1);
    await settle();
    expect(sent).toEqual(['a']);
    // The event is not completed by a's record: its lease lapses and the next fan-out finishes it.
    expect(writes.flatMap((w) => w.records).map((r) => [r.delivery.id, r.completes])).toEqual([['a', undefined]]);
    await sut.onModuleDestroy();
  });

  it('fans out for twice its concurrency, less what is queued or on the wire; the poll looks again', async () => {
    const { sut, mocks, hold, start } = setup({ DELIVERY_POLL_MS: '50' });
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered); // receivers that do not answer until the end of the test
    start(delivery('a'), delivery('b'), delivery('c'));
    await settle();
    expect(mocks.fanOut.mock.calls[0][0]).toBe(4);
    expect(mocks.fanOut.mock.calls[0][2]).toBeGreaterThan(15000); // the lease outlives an attempt's timeout
    await new Promise((r) => setTimeout(r, 120));
    // Two sending, one queued: the polls ask for the one slot left.
    expect(mocks.fanOut.mock.calls.length).toBeGreaterThan(1);
    expect(mocks.fanOut.mock.calls.slice(1).every((c) => c[0] === 1)).toBe(true);
    answer(ok);
    await sut.onModuleDestroy();
  });

  it('counts answered deliveries whose outcome is not yet written against its window: a slow database slows the intake', async () => {
    const { sut, db, recorded, metrics, mocks, start, sent } = setup();
    let unstall!: () => void;
    db.stalled = new Promise((r) => (unstall = r));
    start(delivery('a'), delivery('b'), delivery('c'), delivery('d'));
    await until('four sent', () => sent.length === 4);
    await settle();
    // All four answered; their outcomes wait for the database, and still hold the window.
    const scraped = await metrics.registry.getSingleMetricAsString('plant_store_dispatcher_deliveries');
    expect(scraped).toMatch(/state="recording",app="worker"} 4/);
    expect(await metrics.registry.getSingleMetricAsString('plant_store_dispatcher_window')).toMatch(/ 4$/m);
    expect(mocks.fanOut).toHaveBeenCalledTimes(1);
    unstall();
    await until('four outcomes written', () => recorded().length === 4);
    await sut.onModuleDestroy();
  });

  it('keeps its loop from spinning while the window is full of outcomes being written', async () => {
    const { sut, db, mocks, start } = setup();
    let unstall!: () => void;
    db.stalled = new Promise((r) => (unstall = r));
    mocks.claimDue.mockImplementation(async () => ({ claimed: [], more: true })); // a backlog: each answer wakes the loop
    start(delivery('a'), delivery('b'), delivery('c'), delivery('d'));
    // A loop with nothing on the wire and no room would never yield: this timer would never fire (before the
    // fix, this test hung, as the worker did at 100 % CPU).
    await settle();
    expect(mocks.fanOut.mock.calls.length + mocks.claimDue.mock.calls.length).toBeLessThanOrEqual(3);
    unstall();
    await sut.onModuleDestroy();
  });

  it('takes on deliveries the consumer hands over within its room, and fans out what it left', async () => {
    const { sut, inbox, writes, sent, mocks, hold } = setup();
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered);
    expect(inbox.offer().limit).toBe(4);
    inbox.accept([delivery('a', 's1', 'e1'), delivery('b', 's2', 'e1'), delivery('c', 's1', 'e2')], {
      events: 0,
      rowsFor: [],
    });
    expect(sent).toEqual(['a', 'b']); // two at once, one per subscriber in turn; c queued
    expect(inbox.offer().limit).toBe(1);
    expect(inbox.offer().leaseMs).toBeGreaterThan(15000); // outlives an attempt's timeout
    answer(ok);
    await until('three outcomes written', () => writes.flatMap((w) => w.records).length === 3);
    const completing = writes.flatMap((w) => w.records).filter((r) => r.completes);
    expect(completing.map((r) => r.delivery.eventId).sort()).toEqual(['e1', 'e2']);
    sut.onApplicationBootstrap();
    inbox.accept([], { events: 3, rowsFor: [] }); // events left for a fan-out: the loop runs one
    await until('a fan-out', () => mocks.fanOut.mock.calls.length > 0);
    await sut.onModuleDestroy();
  });

  it('gives freed slots to subscribers in turn, not to the first one with a queue', async () => {
    const { sut, inbox, sent, hold } = setup({ DELIVERY_CONCURRENCY: '1' });
    const answers: (() => void)[] = [];
    hold(() => new Promise<SendResult>((r) => answers.push(() => r(ok))));
    inbox.accept(
      ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((id) => delivery(id, `s-${id[0]}`)),
      { events: 0, rowsFor: [] },
    );
    for (let i = 0; i < 5; i++) {
      answers.shift()!(); // one slot frees
      await new Promise((r) => setImmediate(r));
    }
    expect(sent).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    answers.shift()!();
    await sut.onModuleDestroy();
  });

  it('lets a subscriber that is slow to answer hold only an equal share of the sending slots while others have work', async () => {
    const { sut, inbox, sent, hold } = setup({ DELIVERY_CONCURRENCY: '8', DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '8' });
    const answers: (() => void)[] = [];
    hold(() => new Promise<SendResult>((r) => answers.push(() => r(ok))));
    // Alone, the slow one may fill every slot its own cap allows...
    inbox.accept(
      Array.from({ length: 6 }, (_, i) => delivery(`slow-${i}`, 'slow')),
      { events: 0, rowsFor: [] },
    );
    expect(sent).toHaveLength(6);
    // ...but once a second subscriber has work, each may hold half (4): slow's freed slots go to the fast one.
    inbox.accept(
      Array.from({ length: 4 }, (_, i) => delivery(`fast-${i}`, 'fast')).concat(delivery('slow-6', 'slow')),
      { events: 0, rowsFor: [] },
    );
    expect(sent.filter((id) => id.startsWith('fast'))).toEqual(['fast-0', 'fast-1']); // 8 slots: 6 slow + 2
    for (let i = 0; i < 2; i++) {
      answers.shift()!(); // a slow one answers: its slot goes to the fast one
      await new Promise((r) => setImmediate(r));
    }
    expect(sent.filter((id) => id.startsWith('fast'))).toEqual(['fast-0', 'fast-1', 'fast-2', 'fast-3']);
    expect(sent).not.toContain('slow-6'); // slow holds its share: 4 on the wire
    answers.shift()!(); // below its share again
    await new Promise((r) => setImmediate(r));
    expect(sent).toContain('slow-6');
    while (answers.length > 0) answers.shift()!();
    await sut.onModuleDestroy();
  });

  it('says once per 10 s, not every poll, that the database cannot be reached', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const { sut, mocks } = setup({ DELIVERY_POLL_MS: '10' });
      mocks.fanOut.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      mocks.claimDue.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      sut.onApplicationBootstrap();
      await until('several polls', () => mocks.fanOut.mock.calls.length >= 5 && mocks.claimDue.mock.calls.length >= 5);
      expect(warn.mock.calls.map((c) => String(c[0]).split(':')[0]).sort()).toEqual([
        'claiming deliveries failed, will retry',
        'fanning out events failed, will retry',
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('hands events back when their deliveries arrive after it stopped, instead of letting them wait for expiry', async () => {
    const { sut, inbox, released, sent } = setup();
    await sut.onModuleDestroy();
    expect(inbox.offer().limit).toBe(0);
    inbox.accept([delivery('late', 's1', 'e9'), delivery('later', 's2', 'e9')], { events: 0, rowsFor: [] });
    await settle();
    expect(sent).toEqual([]);
    expect(released.events).toEqual(['e9']);
  });

  it('on stop, hands back claimed rows not sent yet and events with deliveries not sent', async () => {
    const { sut, released, sent, hold, start, mocks, metrics } = setup();
    let answer!: (r: SendResult) => void;
    const unanswered = new Promise<SendResult>((r) => (answer = r));
    hold(() => unanswered);
    mocks.claimDue.mockResolvedValueOnce({ claimed: [delivery('r', 's1', 'e0', true)], more: false });
    start(delivery('a', 's1', 'e1'), delivery('b', 's1', 'e1'), delivery('c', 's1', 'e2'));
    await until('two sent', () => sent.length === 2);
    await settle();
    expect(sent).toEqual(['a', 'b']); // two at once: c and r wait in the queue
    const stopping = sut.onModuleDestroy();
    answer(ok);
    await stopping;
    expect(released.deliveries).toEqual(['r']);
    expect(released.events).toEqual(['e2']); // e1's deliveries were all recorded
    // Nothing is held any more: the fanned-out one left queued (c) is counted as handed back with its event.
    const held = await metrics.registry.getSingleMetric('plant_store_dispatcher_deliveries')!.get();
    expect(held.values.map((v) => [v.labels.state, v.value])).toEqual([
      ['sending', 0],
      ['queued', 0],
      ['recording', 0],
    ]);
  });

  it('writes a record the database refuses for its data again without the reply; the rest of its batch as they were', async () => {
    const { inbox, recorded, hold, db } = setup({ DELIVERY_CONCURRENCY: '4' });
    db.refuses = (r) => r.attempt?.responseBody?.includes('\u0000') ?? false;
    hold(async (d) => ({ ...ok, responseBody: d.id === 'odd' ? 'O\u0000K\u0000' : 'fine' }));
    inbox.accept(
      ['a', 'odd', 'b', 'c'].map((id, i) => delivery(id, `s${i}`)),
      { events: 0, rowsFor: [] },
    );
    await until('four outcomes written', () => recorded().length === 4);
    const byId = Object.fromEntries(recorded().map((r) => [r.delivery.id, r]));
    expect(Object.keys(byId).sort()).toEqual(['a', 'b', 'c', 'odd']);
    for (const id of ['a', 'b', 'c']) expect(byId[id].attempt).toMatchObject({ responseBody: 'fine', error: null });
    expect(byId.odd.outcome).toEqual({ kind: 'succeeded' });
    expect(byId.odd.attempt?.responseBody).toBeNull();
    expect(byId.odd.attempt?.error).toMatch(/refused by the database \(invalid byte sequence/);
  });
});
