/** What ingest's write is told when it may go on: the offer, and the subscribers full here (rows if not waited for). */
export interface Room<T> {
  offer: T;
  full: string[];
}

/**
 * Ingest's writes waiting for room in the dispatcher's window (DeliveryInbox.roomFor): while it is full, or the
 * subscribers of the write's next event hold their share of it, a consumed batch waits in Kafka's stead rather than
 * its deliveries being written as rows (a row costs the database about three times a hand-over).
 */
export class RoomWaits {
  private readonly waits = new Set<{ room: number; first: readonly string[]; done: () => void }>();

  /** `free`: the room in the window now; `full(id)`: the subscriber holds its share; `window`: the most room. */
  constructor(
    private readonly free: () => number,
    private readonly full: (subscriptionId: string) => boolean,
    private readonly window: number,
  ) {}

  /**
   * Resolves (with `answer()`) once the `first` event's subscribers have room and the window has room for all
   * `all` deliveries owed or an eighth of it (what a write waits for: more, and it would store less often, each
   * part waiting longer; never less than the first event's); or at `by` (epoch ms); or at once if `now`.
   */
  until<T>(first: readonly string[], all: number, by: number, now: boolean, answer: () => T): Promise<T> {
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
      const timer = setTimeout(wait.done, by - Date.now());
      this.waits.add(wait);
    });
  }

  /** Room may have freed: the waits it is enough for go on (every wait, when the worker stops). */
  changed(stopping = false) {
    for (const wait of this.waits) if (stopping || this.fits(wait.room, wait.first)) wait.done();
  }

  private fits(room: number, first: readonly string[]): boolean {
    return this.free() >= room && !first.some(this.full);
  }
}
