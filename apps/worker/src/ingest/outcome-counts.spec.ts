import { emptyApplyResult, IngestEvent } from '@app/delivery';
import { countOutcomes } from './outcome-counts';

const event = (eventId: string, offset: number, plantId = 1): IngestEvent => ({
  eventId,
  plantId,
  name: 'Fern',
  tag: null,
  extra: {},
  eventTime: new Date().toISOString(),
  topic: 'plant.created',
  partition: 0,
  offset: String(offset),
  hops: 0,
  originEventId: eventId,
  traceparent: null,
  digest: `digest-${plantId}`,
});

describe(countOutcomes.name, () => {
  it('counts every event once, whatever the batch repeats', () => {
    const r = emptyApplyResult();
    r.fresh = new Set(['a', 'b', 'c', 'd']);
    r.applied = new Set(['a', 'b']);
    r.unchanged = new Set(['c']);
    r.keyReused = ['0:5'];
    const events = [
      event('a', 1),
      event('a', 2), // the same record written twice by a producer retry
      event('b', 3),
      event('c', 4),
      event('b', 5, 2), // the same key with another plant, in the same batch: key_reused
      event('d', 6), // fresh, older than what is stored: stale
      event('e', 7), // seen in an earlier batch
    ];
    const counts = countOutcomes(events, r);
    expect(counts).toEqual({ stored: 2, duplicate: 2, key_reused: 1, unchanged: 1, stale: 1 });
    expect(Object.values(counts).every((n) => n >= 0)).toBe(true);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(events.length);
  });

  it('never counts below zero when a reused key arrives with its first record (the fault that failed a batch)', () => {
    // Before: duplicate = events - fresh - key_reused = 2 - 2 - 1 = -1, which prom-client refused ("It is not
    // possible to decrease a counter"), failing a batch that had been stored; it was fetched and applied again.
    const r = emptyApplyResult();
    r.fresh = new Set(['a']);
    r.applied = new Set(['a']);
    r.keyReused = ['0:2'];
    expect(countOutcomes([event('a', 1), event('a', 2, 9)], r)).toEqual({
      stored: 1,
      duplicate: 0,
      key_reused: 1,
      unchanged: 0,
      stale: 0,
    });
  });
});
