import { FanOutPlan, IngestEvent } from '@app/delivery';
import { deliveriesPerEvent, fittingEvents } from './handover-room';

const event = (eventId: string) => ({ eventId }) as IngestEvent;
const plan = (pairs: [string, string][]): FanOutPlan => ({
  version: '1',
  bodies: [],
  pairs: pairs.map(([eventId, subscriptionId]) => ({ eventId, subscriptionId })),
});

describe('handover room', () => {
  it('counts each event’s deliveries in order, leaving out skipped subscribers', () => {
    const p = plan([
      ['e1', 's1'],
      ['e1', 's2'],
      ['e3', 's1'],
      ['e3', 's2'],
      ['e3', 's3'],
    ]);
    expect(deliveriesPerEvent([event('e1'), event('e2'), event('e3')], p, [])).toEqual([2, 0, 3]);
    expect(deliveriesPerEvent([event('e1'), event('e2'), event('e3')], p, ['s2'])).toEqual([1, 0, 2]);
  });

  it('makes an event owing a delivery to a subscriber waited for not fit at all', () => {
    const p = plan([
      ['e1', 's1'],
      ['e2', 's2'],
      ['e2', 's1'],
    ]);
    const counts = deliveriesPerEvent([event('e1'), event('e2')], p, ['s2'], (id) => id === 's2');
    expect(counts).toEqual([1, Infinity]);
    expect(fittingEvents(counts, 1000)).toBe(1);
  });

  it('counts a repeated event id once, at its first record', () => {
    const p = plan([['e1', 's1']]);
    expect(deliveriesPerEvent([event('e1'), event('e1')], p, [])).toEqual([1, 0]);
  });

  it('takes the leading events whose deliveries fit, never skipping one', () => {
    expect(fittingEvents([2, 0, 3, 1], 5)).toBe(3);
    expect(fittingEvents([2, 0, 3, 1], 6)).toBe(4);
    expect(fittingEvents([4, 1], 3)).toBe(0);
    expect(fittingEvents([0, 0], 0)).toBe(2);
    expect(fittingEvents([], 0)).toBe(0);
  });
});
