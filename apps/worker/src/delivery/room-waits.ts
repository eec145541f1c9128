/**
 * Ingest's writes waiting for room in the dispatcher's window (DeliveryInbox.roomFor): while it is full, a consumed
 * batch waits in Kafka's stead rather than every delivery in it being written as a row.
 */
export class RoomWaits {
  private readonly waits = new Set<{ room: number; done: () => void }>();

  /** `free`: the room in the window now; `window`: the most there is. */
  constructor(
    private readonly free: () => number,
    private readonly window: number,
  ) {}

  /**
   * Resolves (with `answer()`) once there is room for the `first` event's deliveries and for `all` of them or an
   * eighth of the window (what a write waits for: more, and it would store less often, each part waiting longer);
   * or at `by` (epoch ms); or at once if `now`.
   */
  until<T>(first: number, all: number, by: number, now: boolean, answer: () => T): Promise<T> {
    const room = Math.min(this.window, Math.max(first, Math.min(all, Math.ceil(this.window / 8))));
    if (now || this.free() >= room || Date.now() >= by) return Promise.resolve(answer());
    return new Promise((resolve) => {
      const wait = {
        room,
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
    if (this.waits.size === 0) return;
    const free = this.free();
    for (const wait of this.waits) if (stopping || free >= wait.room) wait.done();
  }
}
