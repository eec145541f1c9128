import { DeliveryLease } from '@app/delivery';
import { FanOutTracker } from './fan-out-tracker';
import { delivery } from './claimed-delivery.fixture-spec';

/** The deliveries of event `e1` to subscribers s1, s2 and s3, all tracked. */
const fannedOut = (tracker: FanOutTracker, lease: Partial<DeliveryLease> = {}) => {
  const ds = ['s1', 's2', 's3'].map((s, i) => delivery(`d${i + 1}`, s, 'e1', false, lease));
  ds.forEach((d) => tracker.track(d));
  return ds;
};

describe(FanOutTracker.name, () => {
  it("returns all the event's subscribers with its last delivery answered, and nothing before", () => {
    const tracker = new FanOutTracker();
    const [d1, d2, d3] = fannedOut(tracker);
    expect(tracker.answered(d2)).toBeUndefined();
    expect(tracker.answered(d1)).toBeUndefined();
    expect(tracker.answered(d3)).toEqual(['s1', 's2', 's3']);
    expect(tracker.leased()).toEqual([]);
  });

  it('keeps the events apart', () => {
    const tracker = new FanOutTracker();
    const a = delivery('a', 's1', 'e1');
    const b1 = delivery('b1', 's1', 'e2');
    const b2 = delivery('b2', 's2', 'e2');
    [a, b1, b2].forEach((d) => tracker.track(d));
    expect(tracker.answered(b1)).toBeUndefined();
    expect(tracker.answered(a)).toEqual(['s1']);
    expect(tracker.answered(b2)).toEqual(['s1', 's2']);
  });

  it('returns undefined for a delivery with a row, and does not count it', () => {
    const tracker = new FanOutTracker();
    const [d1] = fannedOut(tracker);
    const row = delivery('d1', 's1', 'e1', true, { token: 'lease-of-e1' });
    expect(tracker.answered(row)).toBeUndefined();
    expect(tracker.answered(row)).toBeUndefined();
    expect(tracker.answered(row)).toBeUndefined();
    expect(tracker.answered(d1)).toBeUndefined();
    expect(tracker.leased()).toEqual([{ id: 'e1', token: 'lease-of-e1' }]);
  });

  it('starts afresh with an event fanned out again under a new lease, ignoring answers under the old one', () => {
    const tracker = new FanOutTracker();
    const [old1] = fannedOut(tracker);
    const again = delivery('n1', 's2', 'e1', false, { token: 'second-lease' });
    tracker.track(again);
    expect(tracker.leased()).toEqual([{ id: 'e1', token: 'second-lease' }]);
    expect(tracker.answered(old1)).toBeUndefined();
    expect(tracker.answered(again)).toEqual(['s2']);
  });

  it('forgets an event one of whose deliveries will not be answered here', () => {
    const tracker = new FanOutTracker();
    const [d1, d2, d3] = fannedOut(tracker);
    tracker.forget(d2);
    expect(tracker.leased()).toEqual([]);
    expect(tracker.answered(d1)).toBeUndefined();
    expect(tracker.answered(d3)).toBeUndefined();
  });

  it('does not forget an event for a delivery with a row or one under another lease', () => {
    const tracker = new FanOutTracker();
    fannedOut(tracker);
    tracker.forget(delivery('r', 's1', 'e1', true, { token: 'lease-of-e1' }));
    tracker.forget(delivery('x', 's1', 'e1', false, { token: 'old-lease' }));
    expect(tracker.leased()).toEqual([{ id: 'e1', token: 'lease-of-e1' }]);
  });

  it('lists the events still open with the lease each is held under', () => {
    const tracker = new FanOutTracker();
    const a = delivery('a', 's1', 'e1');
    tracker.track(a);
    tracker.track(delivery('b', 's1', 'e2'));
    expect(tracker.leased()).toEqual([
      { id: 'e1', token: 'lease-of-e1' },
      { id: 'e2', token: 'lease-of-e2' },
    ]);
    tracker.answered(a);
    expect(tracker.leased()).toEqual([{ id: 'e2', token: 'lease-of-e2' }]);
  });
});
