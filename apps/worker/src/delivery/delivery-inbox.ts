import { ClaimedDelivery, IntakeOffer } from '@app/delivery';
import { Room } from './room-waits';

/**
 * How the ingest stage in the same process hands fresh work to the dispatcher. It writes a batch's events
 * already leased to this worker, as many as `offer()` allows, and hands their deliveries over once they are
 * stored, so they go out without a fan-out statement and without waiting for the dispatcher to wake.
 */
export interface DeliveryInbox {
  /** How many deliveries the dispatcher can take on now, and for which subscribers not. */
  offer(): IntakeOffer;
  /**
   * The room (the offer, whom to wait for still, each subscriber's own room; see RoomWaits) once the `first` event's
   * subscribers have room and the window has room for `all` the deliveries owed (or an eighth of it); or at `by`
   * (epoch ms) whatever the room; or at once when stopping.
   */
  roomFor(first: readonly string[], all: number, by: number): Promise<Room<IntakeOffer>>;
  /**
   * `left`: what the same batch wrote for others to take: events not taken on (for a fan-out to lease), and the
   * subscriptions it wrote delivery rows for, which must wait (for claims; a shut subscriber's for its gate).
   */
  accept(fanned: ClaimedDelivery[], left: { events: number; rowsFor: string[] }): void;
}

/** The token DeliveryModule exports the dispatcher under, for IngestModule to inject. */
export const DELIVERY_INBOX = Symbol('DELIVERY_INBOX');
