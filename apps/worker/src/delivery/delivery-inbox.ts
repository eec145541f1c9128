import { ClaimedDelivery, IntakeOffer } from '@app/delivery';

/**
 * How the ingest stage in the same process hands fresh work to the dispatcher. It writes a batch's events
 * already leased to this worker, as many as `offer()` allows, and hands their deliveries over once they are
 * stored, so they go out without a fan-out statement and without waiting for the dispatcher to wake.
 */
export interface DeliveryInbox {
  /** How many deliveries the dispatcher can take on now, and for which subscribers not. */
  offer(): IntakeOffer;
  /**
   * The offer once there is room for the `first` event's deliveries and for `all` of them, or an eighth of the
   * window if they are more; or at `by` (epoch ms) whatever the room; or at once when stopping.
   */
  roomFor(first: number, all: number, by: number): Promise<IntakeOffer>;
  /**
   * `left`: what the same batch wrote for others to take: events not taken on (for a fan-out to lease), and
   * delivery rows that must wait (for claims).
   */
  accept(fanned: ClaimedDelivery[], left: { events: number; rows: number }): void;
}

/** The token DeliveryModule exports the dispatcher under, for IngestModule to inject. */
export const DELIVERY_INBOX = Symbol('DELIVERY_INBOX');
