import { FanOutPlan, IngestEvent } from '@app/delivery';
import { fittingEvents, HandOverRoom, subscribersOf } from './handover-room';

const events = (...ids: string[]) => ids.map((eventId) => ({ eventId }) as IngestEvent);
const plan = (pairs: [string, string][]): FanOutPlan => ({
  version: '1',
  bodies: [],
  pairs: pairs.map(([eventId, subscriptionId]) => ({ eventId, subscriptionId })),
});
const room = (r: Partial<HandOverRoom> = {}): HandOverRoom => ({
  limit: 100,
  skip: [],
  waitFor: () => false,
  roomOf: () => 100,
  ...r,
});

describe('handover room', () => {
  const p = plan([
    ['e1', 's1'],
    ['e1', 's2'],
    ['e3', 's1'],
    ['e3', 's2'],
    ['e3', 's3'],
    ['e4', 's1'],
  ]);

  it('takes the leading events whose deliveries fit in all, never skipping one', () => {
    expect(fittingEvents(events('e1', 'e2', 'e3', 'e4'), p, room({ limit: 5 }))).toBe(3);
    expect(fittingEvents(events('e1', 'e2', 'e3', 'e4'), p, room({ limit: 6 }))).toBe(4);
    expect(fittingEvents(events('e1', 'e2', 'e3', 'e4'), p, room({ limit: 1 }))).toBe(0);
    expect(fittingEvents(events('e2', 'e2'), p, room({ limit: 0 }))).toBe(2); // nothing owed
  });

  it("stops at the event that would pass a subscriber's own room", () => {
    const roomOf = (id: string) => (id === 's1' ? 2 : 100);
    expect(fittingEvents(events('e1', 'e3', 'e4'), p, room({ roomOf }))).toBe(2);
  });

  it('lets skipped subscribers take no room, and stops at one waited for', () => {
    expect(fittingEvents(events('e1', 'e3', 'e4'), p, room({ limit: 3, skip: ['s2', 's3'] }))).toBe(3);
    const waitFor = (id: string) => id === 's3';
    expect(fittingEvents(events('e1', 'e3', 'e4'), p, room({ skip: ['s3'], waitFor }))).toBe(1);
  });

  it('counts a repeated event id once, at its first record', () => {
    expect(fittingEvents(events('e4', 'e4'), p, room({ limit: 1 }))).toBe(2);
  });

  it("names an event's subscribers", () => {
    expect(subscribersOf('e3', p)).toEqual(['s1', 's2', 's3']);
  });
});
