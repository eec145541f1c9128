import { ClaimedDelivery, Outbox } from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { WriteCoalescer } from '@app/persistence';

/**
 * An attempt starts only with this much of its lease left beyond DELIVERY_TIMEOUT_MS (the longest it can take),
 * so that its outcome is written before the lease lapses; a delivery that waited longer for a slot has its lease
 * renewed first.
 */
export const RECORD_MARGIN_MS = 2000;
/**
 * How often the leases of queued deliveries are looked at: each is renewed while it waits, before it lapses, so a
 * live worker keeps what it queued (else an idle replica takes it once it lapses, queues it behind its own work,
 * and the two pass it back and forth). The lease leaves DELIVERY_TIMEOUT_MS + 5 s: three looks before it is short.
 */
export const RENEW_EVERY_MS = 1000;

/**
 * Keeps the leases of the deliveries this worker holds: long enough for a short wait in the queue, the attempt and
 * its bookkeeping; a lease outliving its worker is what makes a crash safe. Renewals go in batches.
 */
export class LeaseKeeper {
  readonly leaseMs: number;
  private renewing = false;
  private readonly renewer: WriteCoalescer<ClaimedDelivery, { renewed: Set<string>; until: number }>;

  constructor(
    private readonly outbox: Outbox,
    private readonly timeoutMs: number,
    private readonly failures: RateLimitedLog,
  ) {
    this.leaseMs = timeoutMs + 5000;
    this.renewer = new WriteCoalescer((held) => outbox.renewLeases(held, this.leaseMs), 500);
  }

  /** Whether the delivery may be sent now: its lease must outlast the attempt and the writing of its outcome. */
  lasts(d: ClaimedDelivery, now = Date.now()): boolean {
    return d.lease.until - now >= this.timeoutMs + RECORD_MARGIN_MS;
  }

  /**
   * Extends the delivery's lease, if its claim still holds it. A lease that lapsed and was taken by another claim
   * (or that cannot be renewed now) is not sent on: its holder sends it, once; sending it here as well would send
   * it twice, and perhaps after a later version of its plant.
   */
  async renew(d: ClaimedDelivery): Promise<boolean> {
    try {
      const { renewed, until } = await this.renewer.add(d);
      if (!renewed.has(d.id)) return false;
      d.lease.until = Math.max(d.lease.until, until);
      return true;
    } catch (err) {
      this.failures.log('warn', 'renew', {}, `renewing leases failed, not sending: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * Renews, in one batch, the leases among `queued` that would soon be too short to send, and returns those
   * another claim took already (to leave the queue unsent); null when none was due or the batch failed. If the
   * database is away, none is lost: each is checked again before it is sent.
   */
  async renewSoonShort(queued: ClaimedDelivery[], now = Date.now()): Promise<ClaimedDelivery[] | null> {
    const horizon = now + this.timeoutMs + RECORD_MARGIN_MS + 2 * RENEW_EVERY_MS;
    const due = queued.filter((d) => d.lease.until < horizon);
    if (due.length === 0 || this.renewing) return null;
    this.renewing = true; // one batch at a time: a slow database must not stack them up
    try {
      const results = await Promise.all(due.map((d) => this.renewer.add(d)));
      return due.filter((d, i) => {
        if (!results[i].renewed.has(d.id)) return true;
        d.lease.until = Math.max(d.lease.until, results[i].until);
        return false;
      });
    } catch (err) {
      this.failures.log('warn', 'renew', {}, `renewing leases failed, will retry: ${(err as Error).message}`);
      return null;
    } finally {
      this.renewing = false;
    }
  }

  /** Releases the leases of rows not sent, so that any claim takes them at once rather than once they lapse. */
  handBack(rows: ClaimedDelivery[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.outbox.releaseLeases(rows.map((d) => ({ id: d.id, token: d.lease.token }))).catch((err: Error) => {
      // Nothing is lost: the rows are claimed again once their leases lapse.
      this.failures.log('warn', 'release', {}, `handing back ${rows.length} deliveries failed: ${err.message}`);
    });
  }

  /** Hands back the events of deliveries fanned out here and not sent (their lease would hold them up). */
  handBackEvents(fanned: ClaimedDelivery[]): Promise<void> {
    const events = new Map(fanned.map((d) => [d.eventId, { id: d.eventId, token: d.lease.token }]));
    return this.outbox.releaseLeases([], [...events.values()]).catch(() => undefined);
  }

  /** Says (once per 10 s) that a delivery was not sent because another claim took its lease. */
  lost(d: ClaimedDelivery) {
    this.failures.log(
      'warn',
      'lease lost',
      {},
      `delivery ${d.id} to subscription ${d.subscriptionId} not sent: its lease ran out while it waited for a ` +
        `slot and another claim holds it now (raise DELIVERY_CONCURRENCY_PER_SUBSCRIPTION, or lower the load)`,
    );
  }
}
