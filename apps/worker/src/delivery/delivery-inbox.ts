import { ClaimedDelivery, OutboxLease } from '@app/delivery';

/**
 * How the consumer in the same process hands fresh deliveries to the dispatcher. The consumer writes a batch's
 * deliveries already leased to this worker, as many as `room()` allows, and hands them over once they are
 * stored, so a fresh delivery goes out without a claim query and without waiting for the dispatcher to wake.
 */
export interface DeliveryInbox {
  /** How many deliveries the dispatcher can take on now, and for which subscribers not. */
  room(): OutboxLease;
  /** `leftBehind`: deliveries written in the same batch but not leased, for the claim path to pick up. */
  accept(leased: ClaimedDelivery[], leftBehind: number): void;
}

/** The token DeliveryModule exports the dispatcher under, for the consumer module to inject. */
export const DELIVERY_INBOX = Symbol('DELIVERY_INBOX');
