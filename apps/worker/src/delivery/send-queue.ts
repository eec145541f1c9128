import { ClaimedDelivery } from '@app/delivery';

/**
 * Subscribers that had work here this recently share the sending slots equally: a slow one (2 s a request) may
 * not fill half the window with requests that wait on it while the others' deliveries queue behind its share.
 */
export const FAIR_SHARE_WINDOW_MS = 2000;
/** The least share: a subscriber among very many still gets a few requests on the wire at once. */
export const MIN_FAIR_SHARE = 4;

/**
 * The deliveries a worker holds by default, per sending slot. Held, a delivery costs a few hundred bytes (its
 * body is its event's); a slot, a socket and its buffers. Where the window was twice the slots, answers waiting to
 * be recorded filled it at ~4,000 deliveries/s and ingest wrote the rest as rows (docs/benchmarks.md).
 */
export const WINDOW_PER_SLOT = 8;

/** The window: DELIVERY_WINDOW, or WINDOW_PER_SLOT for each slot. */
export const windowOf = (concurrency: number, configured?: number) => configured ?? WINDOW_PER_SLOT * concurrency;

/** Whether one more of a subscriber's deliveries may start now (SubscriberGates.tryStart). */
export type StartCheck = (subscriptionId: string, inFlight: number) => { start: boolean; retryInMs?: number };

/**
 * The deliveries waiting for a sending slot, one queue per subscriber, and the requests on the wire: who goes next
 * (in turn, within a fair share) and how much each subscriber holds. No I/O: the dispatcher starts what it names.
 */
export class SendQueue {
  private readonly queues = new Map<string, ClaimedDelivery[]>();
  private readonly inFlight = new Map<string, number>();
  /** When each subscriber last had a delivery here. */
  private readonly lastWork = new Map<string, number>();
  private onWire = 0;
  /** Requests ended per subscriber (answersBy): a number per enabled subscriber seen here (see forgetAllBut). */
  private readonly answers = new Map<string, number>();

  /**
   * `window`: the deliveries the worker holds at most (queued, on the wire, recording), shared as the slots are;
   * `capOf`: what a subscriber may hold here by its own limits (SubscriberGates.admissionCap).
   */
  constructor(
    private readonly concurrency: number,
    private readonly window = 2 * concurrency,
    private readonly capOf: (subscriptionId: string) => number = () => Infinity,
  ) {}

  /** Requests on the wire, all subscribers. */
  get sending(): number {
    return this.onWire;
  }

  push(d: ClaimedDelivery, now = Date.now()) {
    this.lastWork.set(d.subscriptionId, now);
    const q = this.queues.get(d.subscriptionId) ?? [];
    q.push(d);
    this.queues.set(d.subscriptionId, q);
  }

  /** Takes a delivery out of its queue; false if it is not queued (any more). */
  remove(d: ClaimedDelivery): boolean {
    const q = this.queues.get(d.subscriptionId);
    const i = q?.indexOf(d) ?? -1;
    if (!q || i < 0) return false;
    q.splice(i, 1);
    if (q.length === 0) this.queues.delete(d.subscriptionId);
    return true;
  }

  /** Takes out everything queued for one subscriber. */
  takeQueue(subscriptionId: string): ClaimedDelivery[] {
    const q = this.queues.get(subscriptionId) ?? [];
    this.queues.delete(subscriptionId);
    return q;
  }

  queued(): ClaimedDelivery[] {
    return [...this.queues.values()].flat();
  }

  subscriptions(): string[] {
    return [...this.queues.keys()];
  }

  /** On the wire and queued for the subscriber. */
  held(subscriptionId: string): number {
    return (this.inFlight.get(subscriptionId) ?? 0) + (this.queues.get(subscriptionId)?.length ?? 0);
  }

  /** Subscribers holding at least their cap: `cap(id)`, and never more than their share of the window. */
  full(cap = this.capOf): string[] {
    const share = this.windowShare();
    return this.holding().filter((id) => this.isFull(id, share, cap));
  }

  /** Forgets the counts of subscribers no longer enabled (deleted, disabled): what it keeps follows the set. */
  forgetAllBut(enabled: { has(subscriptionId: string): boolean }) {
    for (const id of this.answers.keys()) if (!enabled.has(id) && !this.inFlight.has(id)) this.answers.delete(id);
  }

  /** How many of the subscriber's requests have ended here in all: how fast it goes, between two looks. */
  answeredBy(subscriptionId: string): number {
    return this.answers.get(subscriptionId) ?? 0;
  }

  /** Subscribers with something queued or on the wire here. */
  holding(): string[] {
    return [...new Set([...this.inFlight.keys(), ...this.queues.keys()])];
  }

  /** What the subscriber may still take on here: its cap (its own, or its share of the window) less what it holds. */
  roomOf(subscriptionId: string, share = this.windowShare()): number {
    return Math.max(0, Math.min(this.capOf(subscriptionId), share) - this.held(subscriptionId));
  }

  /** The subscriber holds its cap here: its own (`capOf`), or its share of the window. */
  isFull(subscriptionId: string, share = this.windowShare(), cap = this.capOf): boolean {
    return this.held(subscriptionId) >= Math.min(cap(subscriptionId), share);
  }

  /** What each active subscriber may hold (queued and on the wire): its fair share of the window, as of the slots. */
  windowShare(now = Date.now()): number {
    return Math.floor((this.fairShare(now) * this.window) / this.concurrency);
  }

  /**
   * The sending slots each active subscriber may hold: all of the concurrency for one alone (its own cap still
   * applies), an equal part for many. Active: anything queued or on the wire here, or work within the last
   * FAIR_SHARE_WINDOW_MS. (A slow subscriber that is full gets nothing new, being left out of claims; counted only
   * by its last work, it dropped out after 2 s and its share grew to the whole window.)
   */
  fairShare(now = Date.now()): number {
    for (const [id, at] of this.lastWork) if (now - at > FAIR_SHARE_WINDOW_MS) this.lastWork.delete(id);
    let active = this.lastWork.size;
    for (const id of new Set([...this.queues.keys(), ...this.inFlight.keys()])) if (!this.lastWork.has(id)) active++;
    return Math.max(MIN_FAIR_SHARE, Math.floor(this.concurrency / Math.max(1, active)));
  }

  /**
   * Starts queued deliveries while there are free slots overall and for their subscriber, one subscriber at a time
   * in turn: a subscriber that got a slot goes to the back of the line (a Map iterates what is added while it
   * iterates), so the first subscribers in the map cannot take every slot that frees while the others queue.
   * Returns when to look again for a subscriber only its rate holds back.
   */
  startInTurn(check: StartCheck, start: (d: ClaimedDelivery) => void): number | undefined {
    const share = this.fairShare();
    let retryInMs: number | undefined;
    for (const [subscriptionId, q] of this.queues) {
      if (this.onWire >= this.concurrency) break;
      const inFlight = this.inFlight.get(subscriptionId) ?? 0;
      if (inFlight >= share) continue;
      const go = check(subscriptionId, inFlight);
      if (!go.start) {
        if (go.retryInMs !== undefined) retryInMs = Math.min(retryInMs ?? Infinity, go.retryInMs);
        continue;
      }
      this.queues.delete(subscriptionId);
      const d = q.shift()!;
      if (q.length > 0) this.queues.set(subscriptionId, q);
      this.onWire++;
      this.inFlight.set(subscriptionId, inFlight + 1);
      start(d);
    }
    return retryInMs;
  }

  /** The receiver answered (or the attempt ended before it): its slot is free. */
  finished(d: ClaimedDelivery) {
    const held = this.inFlight.get(d.subscriptionId) ?? 0;
    if (held === 0) throw new Error(`delivery ${d.id} finished but was not on the wire`);
    this.onWire--;
    this.answers.set(d.subscriptionId, this.answeredBy(d.subscriptionId) + 1);
    const n = held - 1;
    if (n === 0) this.inFlight.delete(d.subscriptionId);
    else this.inFlight.set(d.subscriptionId, n);
  }
}
