/** What ingest's write is told when it may go on. */
export interface Room<T> {
  offer: T;
  /** Full here for now and not slow: its deliveries wait in Kafka, not as rows. */
  waitFor: (subscriptionId: string) => boolean;
  /** What a subscriber may still take on here (its share of the window, its own cap). */
  roomOf: (subscriptionId: string) => number;
  /** The most room there is: an event owing more never fits whole (a fan-out statement takes it in parts). */
  window: number;
  /** The worker stops: nothing is taken on; what is left goes to rows for whoever comes next. */
  stopping: boolean;
}

/** How long a subscriber judged slow is not waited for. */
export const SLOW_FOR_MS = 30_000;

/** What the waits ask of the dispatcher. */
export interface RoomHost {
  /** The room in the window now. */
  free(): number;
  /** The subscriber holds its share here (and its gate is open: a shut one's deliveries are rows anyway). */
  full(subscriptionId: string): boolean;
  /**
   * What each subscriber may still take on, as of now: the shares are counted once for the whole answer (asked per
   * subscriber, a write to many subscribers counted them once per subscriber, O(subscribers²) a turn).
   */
  rooms(): (subscriptionId: string) => number;
  /** How many of the subscriber's requests have ended here in all. */
  answeredBy(subscriptionId: string): number;
  /** Half its share of the sending slots: fewer answers than this during a whole wait, and a full one is slow. */
  fewAnswers(): number;
  window: number;
  /** Its own rate limit here could not give it `fewAnswers()` answers within a wait: waiting for it is no use. */
  heldByItsRate(subscriptionId: string): boolean;
  /** It was just judged slow, `why` in words. */
  judgedSlow(subscriptionId: string, why: string): void;
}

/**
 * Ingest's writes waiting for room in the dispatcher's window (DeliveryInbox.roomFor). While the window is full,
 * or the subscribers of a write's next event hold their share of it, the consumed batch waits and Kafka holds
 * what comes after it: the backlog of an overload stays in Kafka, not in rows (a row costs the database about
 * three times a hand-over, and rows made an overload feed itself). Only a subscriber that stays full through a
 * whole wait (DELIVERY_HANDOVER_WAIT_MS), answering fewer than half its slots' worth meanwhile, is slow: a hanging or
 * crawling endpoint (under an overload every subscriber stays full but answers by the hundred). For SLOW_FOR_MS
 * its deliveries become rows at once, so that it holds up nobody else's.
 */
export class RoomWaits {
  private readonly waits = new Set<{ room: number; first: readonly string[]; done: (stopping?: boolean) => void }>();
  private readonly slow = new Map<string, number>();

  constructor(private readonly host: RoomHost) {}

  /**
   * Resolves (with `offer()`) once the first event's `subscribers` (those not slow) have room and the window has
   * room for all `all` deliveries owed or an eighth of it (what a write waits for: more, and it would store less
   * often, each part waiting longer; never less than the first event's); or at `by` (epoch ms); or at once if
   * `stopping`.
   */
  until<T>(
    subscribers: readonly string[],
    all: number,
    by: number,
    stopping: boolean,
    offer: () => T,
  ): Promise<Room<T>> {
    const { window } = this.host;
    const answer = (): Room<T> => ({
      offer: offer(),
      waitFor: (id) => this.host.full(id) && !this.isSlow(id),
      roomOf: this.host.rooms(),
      window,
      stopping,
    });
    // A subscriber its own rate holds back is slow by its configuration: judged at once, it costs no write a wait
    // (judged by its answers instead, it cost every write to it a whole wait each SLOW_FOR_MS).
    for (const id of subscribers)
      // heldByItsRate first: false at once for a subscriber without a rate limit, where full() counts the shares.
      if (this.host.heldByItsRate(id) && !this.isSlow(id) && this.host.full(id))
        this.judge(
          id,
          `its own rate (maxDeliveriesPerSecond) lets it answer fewer than ${this.host.fewAnswers()} requests in a wait`,
        );
    const first = subscribers.filter((id) => !this.isSlow(id));
    const room = Math.min(window, Math.max(subscribers.length, Math.min(all, Math.ceil(window / 8))));
    if (stopping || this.fits(room, first) || Date.now() >= by) return Promise.resolve(answer());
    return new Promise((resolve) => {
      const wait = {
        room,
        first,
        done: (now: boolean = stopping) => {
          clearTimeout(timer);
          this.waits.delete(wait);
          resolve({ ...answer(), stopping: now });
        },
      };
      const before = first.map((id) => this.host.answeredBy(id));
      const waitedMs = by - Date.now();
      const timer = setTimeout(() => {
        const few = this.host.fewAnswers();
        for (const [i, id] of first.entries()) {
          const answered = this.host.answeredBy(id) - before[i];
          if (this.host.full(id) && answered < few)
            this.judge(
              id,
              `it kept its share of the window full for ${waitedMs} ms and answered ${answered} requests meanwhile`,
            );
        }
        wait.done();
      }, waitedMs);
      this.waits.add(wait);
    });
  }

  /** Room may have freed: the waits it is enough for go on (every wait, when the worker stops). */
  changed(stopping = false) {
    for (const wait of this.waits) if (stopping || this.fits(wait.room, wait.first)) wait.done(stopping);
  }

  private judge(id: string, why: string) {
    this.slow.set(id, Date.now() + SLOW_FOR_MS);
    this.host.judgedSlow(id, why);
  }

  /** Judged slow lately: not waited for now. */
  isSlow(subscriptionId: string, now = Date.now()): boolean {
    const until = this.slow.get(subscriptionId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.slow.delete(subscriptionId);
    return false;
  }

  private fits(room: number, first: readonly string[]): boolean {
    return this.host.free() >= room && !first.some((id) => this.host.full(id));
  }
}

/** Why a subscriber's deliveries become rows for a while: a person reading the log sees which and why. */
export const slowLine = (id: string, why: string) =>
  `subscription ${id} is judged slow (${why}): for ${SLOW_FOR_MS / 1000} s its deliveries are stored as rows ` +
  'and sent from there, so that it holds up no other subscriber (docs/delivery.md, flow control)';
