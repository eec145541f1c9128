/**
 * Ingest's writes waiting for room in the dispatcher's window (DeliveryInbox.roomFor): while it is full, a consumed
 * batch waits in Kafka's stead rather than every delivery in it being written as a row.
 */
export class RoomWaits {
  private readonly waits = new Set<{ room: number; done: () => void }>();

  /** `free`: the room in the window now; `most`: the room a wait is never asked more than (half the window). */
  constructor(
    private readonly free: () => number,
    private readonly most: number,
  ) {}

  /** Resolves (with `answer()`) once there is room for `deliveries`, or at `by` (epoch ms), or at once if `now`. */
  until<T>(deliveries: number, by: number, now: boolean, answer: () => T): Promise<T> {
    const room = Math.min(deliveries, this.most);
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
