import { ClaimedDelivery } from '@app/delivery';
import { FAIR_SHARE_WINDOW_MS, MIN_FAIR_SHARE, SendQueue, StartCheck } from './send-queue';
import { claimedDelivery } from './claimed-delivery.fixture-spec';

const delivery = (id: string, subscriptionId = 's1') => claimedDelivery(id, { subscriptionId });

/** Queues `n` deliveries for the subscriber, named `<subscriber>-<i>`. */
const fill = (queue: SendQueue, subscriptionId: string, n: number, now?: number) => {
  for (let i = 1; i <= n; i++) queue.push(delivery(`${subscriptionId}-${i}`, subscriptionId), now);
};

const always: StartCheck = () => ({ start: true });

/** Starts what the queue lets start; the ids started, in order. */
const startAll = (queue: SendQueue, check: StartCheck = always) => {
  const started: ClaimedDelivery[] = [];
  const retryInMs = queue.startInTurn(check, (d) => started.push(d));
  return { ids: started.map((d) => d.id), started, retryInMs };
};

describe(SendQueue.name, () => {
  it('starts one delivery of each subscriber in turn, each in the order queued', () => {
    const queue = new SendQueue(10);
    fill(queue, 'a', 3);
    fill(queue, 'b', 2);
    expect(startAll(queue).ids).toEqual(['a-1', 'b-1', 'a-2', 'b-2', 'a-3']);
    expect(queue.sending).toBe(5);
    expect(queue.queued()).toEqual([]);
  });

  it('starts no more than the overall concurrency, and the next freed slot goes to the next in turn', () => {
    const queue = new SendQueue(2);
    fill(queue, 'a', 3);
    fill(queue, 'b', 3);
    const first = startAll(queue);
    expect(first.ids).toEqual(['a-1', 'b-1']);
    expect(startAll(queue).ids).toEqual([]);
    queue.finished(first.started[0]);
    expect(queue.sending).toBe(1);
    expect(startAll(queue).ids).toEqual(['a-2']);
    queue.finished(first.started[1]);
    expect(startAll(queue).ids).toEqual(['b-2']);
  });

  it('starts no more of a subscriber than its fair share, even with slots free', () => {
    const queue = new SendQueue(10); // two subscribers active: a share of 5 each
    fill(queue, 'a', 8);
    fill(queue, 'b', 1);
    const { ids } = startAll(queue);
    expect(ids.filter((id) => id.startsWith('a-'))).toHaveLength(5);
    expect(ids).toContain('b-1');
    expect(queue.sending).toBe(6);
    expect(queue.held('a')).toBe(8);
  });

  it('asks the check with the in-flight count, skips those it refuses, and returns the soonest retry asked for', () => {
    const queue = new SendQueue(10);
    fill(queue, 'a', 2);
    fill(queue, 'b', 1);
    fill(queue, 'c', 1);
    fill(queue, 'd', 1);
    const asked: [string, number][] = [];
    const check: StartCheck = (id, inFlight) => {
      asked.push([id, inFlight]);
      if (id === 'b') return { start: false, retryInMs: 300 };
      if (id === 'c') return { start: false, retryInMs: 120 };
      if (id === 'd') return { start: false };
      return { start: true };
    };
    const { ids, retryInMs } = startAll(queue, check);
    expect(ids).toEqual(['a-1', 'a-2']);
    expect(retryInMs).toBe(120);
    expect(asked).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 0],
      ['d', 0],
      ['a', 1],
    ]);
    expect(queue.queued().map((d) => d.id)).toEqual(['b-1', 'c-1', 'd-1']);
    expect(startAll(queue, () => ({ start: false })).retryInMs).toBeUndefined();
  });

  it('gives one subscriber alone the whole concurrency, an equal part to several, never less than the least', () => {
    const now = 1_000_000;
    const queue = new SendQueue(40);
    fill(queue, 's0', 1, now);
    expect(queue.fairShare(now)).toBe(40);
    for (let i = 1; i < 4; i++) fill(queue, `s${i}`, 1, now);
    expect(queue.fairShare(now)).toBe(10);
    for (let i = 4; i < 20; i++) fill(queue, `s${i}`, 1, now);
    expect(queue.fairShare(now)).toBe(MIN_FAIR_SHARE);
  });

  it('counts a subscriber with nothing held here only within FAIR_SHARE_WINDOW_MS of its last work', () => {
    const now = 1_000_000;
    const queue = new SendQueue(12);
    fill(queue, 'old', 1, now - FAIR_SHARE_WINDOW_MS - 1);
    fill(queue, 'edge', 1, now - FAIR_SHARE_WINDOW_MS);
    fill(queue, 'new', 1, now);
    queue.takeQueue('old');
    queue.takeQueue('edge');
    expect(queue.fairShare(now)).toBe(6);
    expect(queue.fairShare(now + 1)).toBe(12);
  });

  it('keeps counting a subscriber while it holds work, however long ago it last got some', () => {
    const now = 1_000_000;
    const queue = new SendQueue(8);
    fill(queue, 'slow', 10, now);
    fill(queue, 'fast', 10, now);
    expect(queue.fairShare(now)).toBe(4);
    startAll(queue);
    // Both still hold work 2.1 s later (the slow one is left out of claims, so it gets nothing new): still halves.
    expect(queue.fairShare(now + FAIR_SHARE_WINDOW_MS + 100)).toBe(4);
  });

  it('calls full the subscribers holding their cap, or twice the fair share, in flight and queued together', () => {
    const queue = new SendQueue(8); // two subscribers active: a share of 4, so at most 8 held
    fill(queue, 'a', 3);
    fill(queue, 'b', 9);
    startAll(queue);
    expect(queue.held('a')).toBe(3);
    expect(queue.held('b')).toBe(9);
    expect(queue.full(() => 3)).toEqual(['a', 'b']);
    expect(queue.full(() => 4)).toEqual(['b']);
    expect(queue.full(() => 100)).toEqual(['b']);
  });

  it('frees a slot of the subscriber when its delivery is finished', () => {
    const queue = new SendQueue(10);
    fill(queue, 'a', 1);
    const { started } = startAll(queue);
    expect([queue.sending, queue.held('a')]).toEqual([1, 1]);
    queue.finished(started[0]);
    expect([queue.sending, queue.held('a')]).toEqual([0, 0]);
    expect(queue.full(() => 1)).toEqual([]);
  });

  it('removes a queued delivery once, and says when it was not queued', () => {
    const queue = new SendQueue(10);
    const d = delivery('a-1', 'a');
    queue.push(d);
    expect(queue.remove(d)).toBe(true);
    expect(queue.remove(d)).toBe(false);
    expect(queue.remove(delivery('x', 'b'))).toBe(false);
    expect(queue.subscriptions()).toEqual([]);
  });

  it("keeps a queue per subscriber, and takes out one subscriber's whole queue, in order, leaving the others", () => {
    const queue = new SendQueue(10);
    fill(queue, 'a', 2);
    fill(queue, 'b', 1);
    expect(queue.subscriptions()).toEqual(['a', 'b']);
    expect([queue.held('a'), queue.held('b'), queue.held('c')]).toEqual([2, 1, 0]);
    expect(queue.takeQueue('a').map((d) => d.id)).toEqual(['a-1', 'a-2']);
    expect(queue.takeQueue('a')).toEqual([]);
    expect(queue.queued().map((d) => d.id)).toEqual(['b-1']);
    expect(queue.held('a')).toBe(0);
  });

  it('counts the requests that ended per subscriber', () => {
    const queue = new SendQueue(8);
    queue.push(delivery('a1', 'a'));
    queue.push(delivery('a2', 'a'));
    const started: ClaimedDelivery[] = [];
    queue.startInTurn(
      () => ({ start: true }),
      (d) => started.push(d),
    );
    started.forEach((d) => queue.finished(d));
    expect([queue.answeredBy('a'), queue.answeredBy('b')]).toEqual([2, 0]);
  });

  it('forgets the counts of subscribers no longer enabled, but not of one with a request on the wire', () => {
    const queue = new SendQueue(8);
    for (const d of ['gone-1', 'kept-1', 'busy-1', 'busy-2']) queue.push(delivery(d, d.slice(0, 4)));
    const started: ClaimedDelivery[] = [];
    queue.startInTurn(
      () => ({ start: true }),
      (d) => started.push(d),
    );
    const busy2 = started.find((d) => d.id === 'busy-2')!;
    started.filter((d) => d !== busy2).forEach((d) => queue.finished(d));
    queue.forgetAllBut(new Set(['kept']));
    // 'busy' still has a request on the wire: a wait may be comparing its count before and after.
    expect(['gone', 'kept', 'busy'].map((id) => queue.answeredBy(id))).toEqual([0, 1, 1]);
    queue.finished(busy2);
    queue.forgetAllBut(new Set(['kept']));
    expect(queue.answeredBy('busy')).toBe(0);
  });
});
