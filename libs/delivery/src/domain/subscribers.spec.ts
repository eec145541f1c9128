import { emptyApplyResult, IngestEvent } from './ingest';
import { fannedOutDeliveries, planFanOut, Subscriber, SubscriberSet } from './subscribers';

const subscriber = (id: string, filter: Subscriber['filter'] = {}): Subscriber => ({
  id,
  url: `http://receiver.test/${id}`,
  token: null,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  previousSecret: null,
  previousUntil: null,
  filter,
  limits: { maxDeliveriesPerSecond: null, maxConcurrency: null },
  headers: {},
  secretHeaders: {},
  kind: 'plants',
});

const set = (...subscribers: Subscriber[]): SubscriberSet => ({
  version: '7',
  subscribers: new Map(subscribers.map((s) => [s.id, s])),
});

const event = (over: Partial<IngestEvent> = {}): IngestEvent => ({
  eventId: 'evt-1',
  plantId: 1,
  name: 'Fern',
  tag: null,
  extra: {},
  eventTime: '2026-11-24T00:00:00.000Z',
  topic: 'plant.created',
  partition: 0,
  offset: '10',
  hops: 0,
  originEventId: 'evt-1',
  traceparent: null,
  digest: 'digest of Fern',
  ...over,
});

describe(planFanOut.name, () => {
  it('plans each (event, subscriber) pair its filter lets through, none past MAX_WEBHOOK_HOPS', () => {
    const subs = set(subscriber('a'), subscriber('b', { tags: ['green'] }));
    const plan = planFanOut(
      [event({ eventId: 'e1', tag: 'green' }), event({ eventId: 'e2', plantId: 2 }), event({ eventId: 'e3', hops: 3 })],
      subs,
      3,
    );
    expect(plan.version).toBe('7');
    expect(plan.bodies).toHaveLength(3);
    expect(plan.pairs).toEqual([
      { eventId: 'e1', subscriptionId: 'a' },
      { eventId: 'e1', subscriptionId: 'b' },
      { eventId: 'e2', subscriptionId: 'a' },
    ]);
  });

  // A sender's retry after a 503 whose publish was written after all (or a record fetched again) puts the same event
  // id on the topic twice, often in one batch. The statement stores it once; each pair must be asked for once, or
  // the statement hands it back twice and the subscriber is sent it twice.
  it('plans a record redelivered within the batch once, as the first by partition and offset', () => {
    const subs = set(subscriber('a'), subscriber('b', { tags: ['green'] }));
    const first = event({ offset: '10', tag: 'green' });
    const again = event({ offset: '11', tag: 'green' });
    expect(planFanOut([first, again], subs, 10).pairs).toEqual([
      { eventId: 'evt-1', subscriptionId: 'a' },
      { eventId: 'evt-1', subscriptionId: 'b' },
    ]);
    // A reused key with another plant, later in the batch: the statement stores the first, so its filter decides.
    const other = event({ offset: '9', tag: null, name: 'Cactus', digest: 'digest of Cactus' });
    expect(planFanOut([other, first], subs, 10).pairs).toEqual([{ eventId: 'evt-1', subscriptionId: 'a' }]);
    expect(planFanOut([first, other], subs, 10).pairs).toEqual([{ eventId: 'evt-1', subscriptionId: 'a' }]);
  });
});

describe(fannedOutDeliveries.name, () => {
  it('builds each pair the statement took on from the first record of its event', () => {
    const subs = set(subscriber('a'));
    const events = [event({ offset: '11', name: 'Later copy' }), event({ offset: '10' })];
    const plan = planFanOut(events, subs, 10);
    const result = {
      ...emptyApplyResult(),
      sending: [{ eventId: 'evt-1', subscriptionId: 'a' }],
      lease: { token: 'lease', until: 1 },
    };
    const fanned = fannedOutDeliveries(events, plan, subs, result);
    expect(fanned.map((d) => [d.eventId, d.subscriptionId, JSON.parse(d.body).name])).toEqual([['evt-1', 'a', 'Fern']]);
  });
});
