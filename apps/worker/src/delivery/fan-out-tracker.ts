import { ClaimedDelivery, LeasedRef } from '@app/delivery';

/** An event fanned out from memory here: the lease it is held under, its deliveries' subscribers, how many answered. */
interface FanOut {
  token: string;
  subscriptionIds: string[];
  answered: number;
}

/**
 * The events whose deliveries this worker sends from memory (no row until their first outcome). The last of an
 * event's deliveries to be answered carries the event's subscribers with its record: the statement that writes it
 * marks the event fanned out if every one of them then has its row (see RECORD_FANNED_OUT). So an event is never
 * done with a delivery missing (one whose write failed is sent again, alone, by a fan-out once the lease runs out),
 * and no statement of its own is needed. Bounded by the window: each event here has a delivery in it.
 */
export class FanOutTracker {
  private readonly events = new Map<string, FanOut>();

  /** A delivery fanned out from its event. An event fanned out again under a new lease (the old lapsed) starts afresh. */
  track(d: ClaimedDelivery) {
    let state = this.events.get(d.eventId);
    if (state?.token !== d.lease.token) state = { token: d.lease.token, subscriptionIds: [], answered: 0 };
    state.subscriptionIds.push(d.subscriptionId);
    this.events.set(d.eventId, state);
  }

  /** One of an event's deliveries has its answer: the subscribers of all of them if it is the last, else undefined. */
  answered(d: ClaimedDelivery): string[] | undefined {
    if (d.hasRow) return undefined;
    const state = this.events.get(d.eventId);
    if (state?.token !== d.lease.token || ++state.answered < state.subscriptionIds.length) return undefined;
    this.events.delete(d.eventId);
    return state.subscriptionIds;
  }

  /**
   * A delivery of the event will not be answered here (lease lost, subscription gone): the event cannot be
   * completed from here; it is left to its lease, and the next fan-out finishes it.
   */
  forget(d: ClaimedDelivery) {
    if (!d.hasRow && this.events.get(d.eventId)?.token === d.lease.token) this.events.delete(d.eventId);
  }

  /** The events still open here, to hand back when stopping. */
  leased(): LeasedRef[] {
    return [...this.events].map(([id, state]) => ({ id, token: state.token }));
  }
}
