/** What ingest's write is told when it may go on: the offer, and which subscribers' deliveries to wait for still. */
export interface Room<T> {
  offer: T;
  /** Full here for now, and worth waiting for (the wait not over, the subscriber not slow): not rows yet. */
  waitFor: (subscriptionId: string) => boolean;
}

/** How long a subscriber a write waited for in vain is not waited for again. */
export const SLOW_FOR_MS = 30_000;

/**
 * Ingest's writes waiting for room in the dispatcher's window (DeliveryInbox.roomFor): while it is full, or the
 * subscribers of the write's next event hold their share of it, a consumed batch waits in Kafka's stead rather than
 * its deliveries being written as rows (a row costs the database about three times a hand-over).
 */
export class RoomWaits {
  private readonly waits = new Set<{ room: number; first: readonly string[]; done: () => void }>();
  /**
   * Subscribers a write waited for in vain, and until when none waits for them again: a slow one's deliveries go
   * to rows at once, instead of every write holding everyone's deliveries for the whole wait.
   */
  private readonly slow = new Map<string, number>();

  /** `free`: the room in the window now; `full(id)`: the subscriber holds its share; `window`: the most room. */
  constructor(
    private readonly free: () => number,
    private readonly full: (subscriptionId: string) => boolean,
    private readonly window: number,
  ) {}

  /**
   * Resolves (with `offer()`) once the `first` event's subscribers have room and the window has room for all
   * `all` deliveries owed or an eighth of it (what a write waits for: more, and it would store less often, each
   * part waiting longer; never less than the first event's); or at `by` (epoch ms); or at once if `now`.
   */
  until<T>(subscribers: readonly string[], all: number, by: number, now: boolean, offer: () => T): Promise<Room<T>> {
    const answer = (): Room<T> => ({
      offer: offer(),
      waitFor: (id) => Date.now() < by && this.full(id) && !this.isSlow(id),
    });
    const first = subscribers.filter((id) => !this.isSlow(id));
    const room = Math.min(this.window, Math.max(first.length, Math.min(all, Math.ceil(this.window / 8))));
    if (now || this.fits(room, first) || Date.now() >= by) return Promise.resolve(answer());
    return new Promise((resolve) => {
      const wait = {
        room,
        first,
        done: () => {
          clearTimeout(timer);
          this.waits.delete(wait);
          resolve(answer());
        },
      };
      const timer = setTimeout(() => {
        for (const id of first) if (this.full(id)) this.slow.set(id, Date.now() + SLOW_FOR_MS);
        wait.done();
      }, by - Date.now());
      this.waits.add(wait);
    });
  }

  /** Room may have freed: the waits it is enough for go on (every wait, when the worker stops). */
  changed(stopping = false) {
    for (const wait of this.waits) if (stopping || this.fits(wait.room, wait.first)) wait.done();
  }

  /** Waited for in vain lately: not waited for now. */
  isSlow(subscriptionId: string, now = Date.now()): boolean {
    const until = this.slow.get(subscriptionId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.slow.delete(subscriptionId);
    return false;
  }

  private fits(room: number, first: readonly string[]): boolean {
    return this.free() >= room && !first.some(this.full);
  }
}
