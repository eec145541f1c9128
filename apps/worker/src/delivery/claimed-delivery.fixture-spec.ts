// A claimed delivery for the delivery specs (not a spec itself; named *spec.ts to stay out of the build): one
// fanned out from `event-<id>`, to subscription s1, leased for a minute, unless `overrides` say otherwise.
import { ClaimedDelivery, DeliveryLease } from '@app/delivery';

export const claimedDelivery = (id: string, overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery => {
  // No `limits`: the gates' specs set them by the heartbeat (limits a claim read would override those).
  const base: Omit<ClaimedDelivery, 'limits'> = {
    headers: {},
    secretHeaders: {},
    id,
    hasRow: false,
    subscriptionId: 's1',
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
    lease: { token: `lease-of-${id}`, until: Date.now() + 60_000 },
  };
  return { ...base, ...overrides } as ClaimedDelivery;
};

/**
 * A delivery fanned out from event `event` (no row yet), or with `hasRow`, one claimed from the rows; leased for
 * a minute unless `lease` says otherwise.
 */
export const delivery = (
  id: string,
  subscriptionId = 's1',
  event = `event-${id}`,
  hasRow = false,
  lease: Partial<DeliveryLease> = {},
): ClaimedDelivery =>
  claimedDelivery(id, {
    hasRow,
    subscriptionId,
    eventId: event,
    originEventId: event,
    lease: { token: hasRow ? `lease-of-${id}` : `lease-of-${event}`, until: Date.now() + 60_000, ...lease },
  });
