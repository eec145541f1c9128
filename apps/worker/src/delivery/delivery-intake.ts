import { ClaimedDelivery, Outbox } from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { DeliverySignal } from './delivery-signal';

/** While sends are finishing, a claim waits this long for more slots to free, so that one query serves many. */
const CLAIM_COALESCE_MS = 5;
/**
 * After a claim of rows left due found none, rows flagged meanwhile are claimed this much later, not at once: what
 * flags rows that no claim here may take (a subscriber whose gate stays shut gets a row for every event ingest hands
 * over) then costs at most 20 empty claims a second, not one per batch (bench:noisy-neighbour: ~80 a second).
 */
const EMPTY_CLAIM_QUIET_MS = 50;

/** What the intake asks of the dispatcher it feeds. */
export interface IntakeHost {
  /** Deliveries the dispatcher can take on now. */
  free(): number;
  /**
   * Subscribers to leave out of the next claim: `full` here (their rows are claimed again as their queue drains),
   * or their gate `shut` (their rows wait until it opens, which calls lookAgain).
   */
  leftOut(): { full: string[]; shut: string[] };
  /** Nothing queued nor on the wire. */
  idle(): boolean;
  /** Requests on the wire. */
  sending(): number;
  take(ds: ClaimedDelivery[]): void;
}

/** The subscribers left out for either reason, once each. */
export const everyLeftOut = (l: { full: string[]; shut: string[] }) => [...new Set([...l.full, ...l.shut])];

/**
 * The loop that keeps the dispatcher's window filled from the database, in batches: events nobody took on, leased
 * with a fan-out statement, then due delivery rows (claimDue). It sleeps until woken (DeliverySignal: fresh work,
 * freed room) or the poll, and claims only what it knows may be waiting: events, rows left due, and a poll's worth
 * of retries coming due with time.
 */
export class DeliveryIntake {
  /** Due delivery rows were left unclaimed: claim again as slots free up rather than at the next poll. */
  private rows = true;
  /** Events may be waiting to be fanned out. */
  private events = true;
  private lastRowClaim = 0;
  /** Until when rows flagged are not claimed (EMPTY_CLAIM_QUIET_MS). */
  private quietUntil = 0;
  private stopped = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly signal: DeliverySignal,
    private readonly host: IntakeHost,
    private readonly opts: { window: number; pollMs: number; leaseMs: number },
    private readonly failures: RateLimitedLog,
  ) {}

  /** Rows were left due (set aside, over a share, a gate opened): claim them as room frees. */
  moreRows() {
    this.rows = true;
  }

  /**
   * A write made rows for `subscriptions`: claim them as room frees, unless every one is `shut` here (its rows wait
   * for its gate to open, lookAgain; claiming for them would find nothing: bench:noisy-neighbour, beside a tenth
   * whose circuit stayed open, 3.5 times the claims of a healthy one). Whether they were claimable.
   */
  rowsWritten(subscriptions: string[], shut: (subscriptionId: string) => boolean): boolean {
    const claimable = subscriptions.some((id) => !shut(id));
    if (claimable) this.rows = true;
    return claimable;
  }

  moreEvents() {
    this.events = true;
  }

  /** Both may be waiting (a gate opened): look at once. */
  lookAgain() {
    this.rows = true;
    this.quietUntil = 0;
    this.events = true;
    this.signal.notify();
  }

  /** Room freed: wake the loop if anything may be waiting for it. */
  roomFreed() {
    if (this.rows || this.events) this.signal.notify();
  }

  stop() {
    this.stopped = true;
    this.signal.notify();
  }

  async run() {
    const { window, pollMs } = this.opts;
    while (!this.stopped) {
      const want = this.host.free();
      const claimed: ClaimedDelivery[] = [];
      // Claim in batches: when a quarter of the window is free, or when nothing at all is under way.
      if (want >= Math.max(1, window / 4) || (want > 0 && this.host.idle())) {
        const { full, shut } = this.host.leftOut();
        const saturated = everyLeftOut({ full, shut });
        claimed.push(...(await this.fanOutEvents(want, saturated, shut)));
        // Rows are claimed when some were left due, and at every poll (a retry comes due with time).
        const rowsDue = (this.rows && Date.now() >= this.quietUntil) || Date.now() - this.lastRowClaim >= pollMs;
        if (rowsDue && want > claimed.length)
          claimed.push(...(await this.claimRows(want - claimed.length, saturated, full.length > 0)));
      }
      this.host.take(claimed);
      // Claimed a full batch: more may be due, go again at once. Otherwise (or with no room at all: the window
      // may be full of outcomes being written, with nothing on the wire) sleep until woken or the poll.
      if (claimed.length < want || want === 0) {
        const quietMs = this.rows ? this.quietUntil - Date.now() : 0;
        const waitMs = quietMs > 0 ? Math.min(quietMs, pollMs) : pollMs;
        if (!(await this.signal.wait(waitMs)) && waitMs === pollMs) this.events = true; // the poll: look again
      }
      if (this.host.sending() > 0) await new Promise((r) => setTimeout(r, CLAIM_COALESCE_MS));
    }
  }

  /** Leases events and takes their deliveries that can go at once; the others were written as rows to claim. */
  private async fanOutEvents(want: number, saturated: string[], shut: string[]): Promise<ClaimedDelivery[]> {
    if (!this.events) return [];
    try {
      const result = await this.outbox.fanOut(want, saturated, this.opts.leaseMs);
      this.events = result.more;
      this.rowsWritten(result.deferredFor, (id) => shut.includes(id));
      return result.claimed;
    } catch (err) {
      this.failures.log('warn', 'fan-out', {}, `fanning out events failed, will retry: ${(err as Error).message}`);
      return [];
    }
  }

  /**
   * `fullLeftOut`: some were left out for a full queue here, and their rows are to be claimed as it drains. Those
   * left out for a shut gate are not: their rows wait until it opens (lookAgain). Counting them too, a subscriber
   * whose circuit stayed open had every freed slot claim again, for nothing (bench:noisy-neighbour: ~170 empty
   * claims a second beside a failing tenth, a quarter of a core of PostgreSQL).
   */
  private async claimRows(want: number, saturated: string[], fullLeftOut: boolean): Promise<ClaimedDelivery[]> {
    try {
      this.lastRowClaim = Date.now();
      const result = await this.outbox.claimDue(want, saturated, this.opts.leaseMs);
      this.rows = result.more || fullLeftOut;
      if (result.claimed.length === 0) this.quietUntil = Date.now() + EMPTY_CLAIM_QUIET_MS;
      return result.claimed;
    } catch (err) {
      this.failures.log('warn', 'claim', {}, `claiming deliveries failed, will retry: ${(err as Error).message}`);
      return [];
    }
  }
}
