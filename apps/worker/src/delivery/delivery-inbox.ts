/**
 * How the consumer in the same process tells the dispatcher that it has stored events to fan out, so that they
 * go out at once rather than at the dispatcher's next poll.
 */
export interface DeliveryInbox {
  /** `count` events were written to the outbox. */
  eventsStored(count: number): void;
}

/** The token DeliveryModule exports the dispatcher under, for the consumer module to inject. */
export const DELIVERY_INBOX = Symbol('DELIVERY_INBOX');
