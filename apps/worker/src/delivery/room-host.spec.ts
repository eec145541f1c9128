import { claimedDelivery } from './claimed-delivery.fixture-spec';
import { leftOutOf, roomHostOf } from './room-host';
import { SendQueue } from './send-queue';
import { SubscriberGates } from './subscriber-gates';

/** Gates where `shut` subscribers may not send and `rates` have a rate limit here (deliveries a second). */
const gatesOf = (shut: string[] = [], rates: Record<string, number> = {}) =>
  ({
    shut: (id: string) => shut.includes(id),
    excluded: () => shut,
    rateOf: (id: string) => rates[id] ?? null,
  }) as unknown as SubscriberGates;

/** A queue of 4 slots and a window of 8, holding `n` deliveries of each subscriber named. */
const queueHolding = (held: Record<string, number>) => {
  const queue = new SendQueue(4, 8);
  for (const [id, n] of Object.entries(held))
    for (let i = 0; i < n; i++) queue.push(claimedDelivery(`${id}-${i}`, { subscriptionId: id }));
  return queue;
};

const opts = { window: 8, free: () => 0, handoverWaitMs: 250, judgedSlow: () => undefined };

describe(roomHostOf.name, () => {
  it('says a subscriber holding its share is full, unless its gate is shut (its deliveries are rows anyway)', () => {
    const queue = queueHolding({ a: 8, b: 8 });
    expect(roomHostOf(queue, gatesOf(), opts).full('a')).toBe(true);
    expect(roomHostOf(queue, gatesOf(['a']), opts).full('a')).toBe(false);
    expect(roomHostOf(queue, gatesOf(['a']), opts).full('b')).toBe(true);
  });

  it('gives each subscriber what is left of its share of the window', () => {
    const queue = queueHolding({ a: 1 });
    const rooms = roomHostOf(queue, gatesOf(), opts).rooms();
    expect(rooms('a')).toBe(queue.roomOf('a'));
    expect(rooms('a')).toBeLessThan(rooms('b'));
  });

  it('does not wait for a subscriber whose own rate could not give it half its slots within a wait', () => {
    const queue = queueHolding({});
    const host = roomHostOf(queue, gatesOf([], { slow: 1, quick: 1000 }), opts);
    expect(host.heldByItsRate('slow')).toBe(true); // 1/s × 0.25 s < half of a fair share
    expect(host.heldByItsRate('quick')).toBe(false);
    expect(host.heldByItsRate('unlimited')).toBe(false);
  });
});

describe(leftOutOf.name, () => {
  it('leaves out the full and the shut, naming a full one whose gate is shut only as shut', () => {
    const queue = queueHolding({ a: 8, b: 8, c: 1 });
    expect(leftOutOf(queue, gatesOf(['b', 'd']))).toEqual({ full: ['a'], shut: ['b', 'd'] });
  });
});
