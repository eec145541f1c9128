import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import {
  AttemptRecord,
  ClaimedDelivery,
  decideOutcome,
  DeliveryAttempt,
  NO_LEASE,
  Outbox,
  OUTBOX,
  OutboxLease,
  parseSchedule,
} from '@app/delivery';
import { nestSink, RateLimitedLog } from '@app/observability';
import { isDatabaseUnavailable, isDataError, WriteCoalescer } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { DeliveryInbox } from './delivery-inbox';
import { DeliverySender } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';
import { HEARTBEAT_MS, SubscriberGates } from './subscriber-gates';
import { SubscriberCache } from './subscriber-cache';

const CLAIM_COALESCE_MS = 5;
/**
 * Outcomes wait this long for others to share their statement: the receiver has its delivery already, and a
 * statement costs ~0.8 ms plus ~35 µs a row (measured), so a few milliseconds buy fewer, fuller statements.
 */
const RECORD_LINGER_MS = 10;
/** An outcome the database could not take (away, too slow) is tried again while its lease has this much left. */
const RECORD_RETRY_MARGIN_MS = 1000;
/**
 * An attempt starts only with this much of its lease left beyond DELIVERY_TIMEOUT_MS (the longest it can take),
 * so that its outcome is written before the lease lapses; a delivery that waited longer for a slot has its lease
 * renewed first.
 */
const RECORD_MARGIN_MS = 2000;
/**
 * How often the leases of queued deliveries are looked at: each is renewed while it waits, before it lapses, so a
 * live worker keeps what it queued (else an idle replica takes it once it lapses, queues it behind its own work,
 * and the two pass it back and forth). The lease leaves DELIVERY_TIMEOUT_MS + 5 s: three looks before it is short.
 */
const RENEW_EVERY_MS = 1000;
/**
 * Subscribers that had work here this recently share the sending slots equally: a slow one (2 s a request) may
 * not fill half the window with requests that wait on it while the others' deliveries queue behind its share.
 */
const FAIR_SHARE_WINDOW_MS = 2000;
/** The least share: a subscriber among very many still gets a few requests on the wire at once. */
const MIN_FAIR_SHARE = 4;

/**
 * What the dispatcher keeps of an event it fans out: the lease it holds the event under, the subscribers of its
 * deliveries, and how many answered.
 */
interface FanOutState {
  token: string;
  subscriptionIds: string[];
  answered: number;
}

/**
 * Sends deliveries from the outbox. Work is leased, so any number of worker replicas share it and a crashed
 * worker's work is picked up again once its lease runs out (same webhook-id, so receivers can de-duplicate).
 * Two sources, in batches (up to twice the concurrency ahead), because a query costs more than an HTTP request:
 * - events, fanned out to their subscribers in memory: each delivery is written once, with the outcome of its
 *   first attempt, and the event is done once all of them are. Usually the ingest stage in this process stores
 *   events already leased to this dispatcher, up to its room, and hands their deliveries over (DeliveryInbox);
 *   the others are leased with a fan-out statement (fanOut).
 * - delivery rows (claimDue): retries, deliveries waiting behind an earlier one of their plant, those of a
 *   subscriber that was saturated here, and any a crashed worker left.
 * Concurrency is bounded overall and per subscription: deliveries wait in a per-subscription queue for a free
 * slot. When a subscriber's may go is SubscriberGates' call (its limits, a pause it asked for, its circuit): a
 * subscriber whose gate shuts has what is queued here set aside (handed back, or written as rows to wait), and is
 * left out of claims and fan-outs until it opens again.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnModuleDestroy, DeliveryInbox {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  /**
   * One line per failing subscriber every 10 s, however many deliveries fail: a dead one cannot flood the log.
   * The same for fan-outs and claims while the database is away (two lines a poll otherwise).
   */
  private readonly failures = new RateLimitedLog(nestSink(this.logger));
  private readonly schedule: number[];
  private readonly leaseMs: number;
  /** Deliveries this worker takes on ahead: on the wire plus queued for a slot. */
  private readonly window: number;
  private readonly inFlight = new Map<string, number>(); // requests on the wire, per subscription
  private readonly lastWork = new Map<string, number>(); // when each subscriber last had a delivery here
  private readonly queued = new Map<string, ClaimedDelivery[]>(); // claimed, waiting for a slot
  private queuedCount = 0;
  /** Requests on the wire; a delivery whose response is being recorded no longer takes a slot. */
  private sending = 0;
  /** Answered, outcome not yet written: still in the window, so a slow database slows the intake, and memory
   * stays bounded, rather than outcomes piling up. */
  private recording = 0;
  private readonly running = new Set<Promise<void>>();
  /** Outcomes are written in batches: one statement for every attempt that finished meanwhile. */
  private readonly recorder: WriteCoalescer<AttemptRecord, void>;
  /** Leases of deliveries about to be sent after a long wait for a slot, renewed in batches too. */
  private readonly renewer: WriteCoalescer<ClaimedDelivery, { renewed: Set<string>; until: number }>;
  /** Events being fanned out from memory here, by id. Bounded by the window: each has a delivery in it. */
  private readonly fanOuts = new Map<string, FanOutState>();
  private stopped = false;
  private loop: Promise<void> | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private gatesTimer: NodeJS.Timeout | null = null;
  /** Wakes the pump when a rate-limited subscriber's next token is due. */
  private pumpTimer: NodeJS.Timeout | null = null;
  private pumpAt = Infinity;
  private renewingQueued = false;
  /** Due delivery rows were left unclaimed: claim again as slots free up rather than at the next poll. */
  private backlog = true;
  /** Events may be waiting to be fanned out. */
  private events = true;
  private lastRowClaim = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
    @Inject(OUTBOX) private readonly deliveries: Outbox,
    private readonly sender: DeliverySender,
    private readonly signal: DeliverySignal,
    private readonly metrics: WorkerMetrics,
    private readonly gates: SubscriberGates,
    private readonly subscribers: SubscriberCache,
  ) {
    this.schedule = parseSchedule(config.DELIVERY_RETRY_SCHEDULE);
    // Long enough for a short wait in the queue, the attempt and its bookkeeping; a lease outliving its
    // worker is what makes a crash safe.
    this.leaseMs = config.DELIVERY_TIMEOUT_MS + 5000;
    this.window = 2 * config.DELIVERY_CONCURRENCY;
    this.recorder = new WriteCoalescer((records) => deliveries.record(records), 500, undefined, RECORD_LINGER_MS);
    this.renewer = new WriteCoalescer((held) => deliveries.renewLeases(held, this.leaseMs), 500);
    gates.listen({
      shut: (subscriptionId) => this.setAside(subscriptionId),
      opened: () => {
        // Its rows are claimable here again; its new events go from memory again.
        this.backlog = true;
        this.events = true;
        this.signal.notify();
        if (!this.stopped) this.pump();
      },
    });
    subscribers.onChange((set) => this.dropUnsubscribed((id) => set.subscribers.has(id)));
    metrics.watchDispatcher(this.window, () => ({
      sending: this.sending,
      queued: this.queuedCount,
      recording: this.recording,
    }));
  }

  room(): OutboxLease {
    if (this.stopped) return NO_LEASE;
    return { limit: this.free(), skipSubscriptions: this.saturated(), leaseMs: this.leaseMs };
  }

  accept(fanned: ClaimedDelivery[], left: { events: number; rows: number }) {
    if (this.stopped) {
      // Stopping between room() and here: hand the events back rather than let them wait for the lease.
      const events = new Map(fanned.map((d) => [d.eventId, { id: d.eventId, token: d.lease.token }]));
      this.deliveries.releaseLeases([], [...events.values()]).catch(() => undefined);
    } else {
      this.enqueueAll(fanned.map((d) => this.tracked(d)));
      this.pump();
    }
    if (left.events > 0) this.events = true;
    if (left.rows > 0) this.backlog = true;
    if (left.events + left.rows > 0) this.signal.notify();
  }

  onApplicationBootstrap() {
    // The limits and health first, so that the first claims already respect them.
    this.loop = this.gates.refresh().then(() => this.run());
    this.renewTimer = setInterval(() => void this.renewQueued(), RENEW_EVERY_MS);
    this.gatesTimer = setInterval(() => void this.gates.refresh(), HEARTBEAT_MS);
  }

  /**
   * Stops claiming, hands back what is queued, waits for the attempts in flight, then hands back the events
   * with deliveries not sent (the next fan-out sends only those without a row), before the pool closes.
   */
  async onModuleDestroy() {
    this.stopped = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.gatesTimer) clearInterval(this.gatesTimer);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.signal.notify();
    await this.loop;
    const unsent = [...this.queued.values()]
      .flat()
      .filter((d) => d.stored)
      .map((d) => ({ id: d.id, token: d.lease.token }));
    this.queued.clear();
    this.queuedCount = 0;
    await this.deliveries.releaseLeases(unsent).catch(() => undefined); // else they wait for the lease to expire
    await Promise.allSettled([...this.running]);
    const events = [...this.fanOuts].map(([id, state]) => ({ id, token: state.token }));
    await this.deliveries.releaseLeases([], events).catch(() => undefined);
    await this.gates.stop();
  }

  private async run() {
    while (!this.stopped) {
      const want = this.free();
      const claimed: ClaimedDelivery[] = [];
      // Claim in batches: when a quarter of the window is free, or when nothing at all is under way.
      if (want >= Math.max(1, this.window / 4) || (want > 0 && this.sending + this.queuedCount === 0)) {
        const saturated = this.saturated();
        claimed.push(...(await this.fanOutEvents(want, saturated)));
        // Rows are claimed when some were left due, and at every poll (a retry comes due with time).
        const rowsDue = this.backlog || Date.now() - this.lastRowClaim >= this.config.DELIVERY_POLL_MS;
        if (rowsDue && want > claimed.length) claimed.push(...(await this.claimRows(want - claimed.length, saturated)));
      }
      this.enqueueAll(claimed);
      this.pump();
      // Claimed a full batch: more may be due, go again at once. Otherwise (or with no room at all: the window
      // may be full of outcomes being written, with nothing on the wire) sleep until woken or the poll.
      if (claimed.length < want || want === 0) {
        if (!(await this.signal.wait(this.config.DELIVERY_POLL_MS))) this.events = true; // the poll: look again
      }
      // While sends are finishing, let a few milliseconds of them free their slots so that one claim query
      // serves many.
      if (this.sending > 0) await new Promise((r) => setTimeout(r, CLAIM_COALESCE_MS));
    }
  }

  /** Leases events and takes their deliveries that can go at once; the others were written as rows to claim. */
  private async fanOutEvents(want: number, saturated: string[]): Promise<ClaimedDelivery[]> {
    if (!this.events) return [];
    try {
      const result = await this.deliveries.fanOut(want, saturated, this.leaseMs);
      this.events = result.more;
      if (result.deferred > 0) this.backlog = true;
      return result.claimed.map((d) => this.tracked(d));
    } catch (err) {
      this.failures.log('warn', 'fan-out', {}, `fanning out events failed, will retry: ${(err as Error).message}`);
      return [];
    }
  }

  /**
   * A delivery fanned out from its event: the last of them to be answered completes the event (see answered). An
   * event fanned out again here under a new lease (the old one lapsed) starts afresh.
   */
  private tracked(d: ClaimedDelivery): ClaimedDelivery {
    let state = this.fanOuts.get(d.eventId);
    if (state?.token !== d.lease.token) state = { token: d.lease.token, subscriptionIds: [], answered: 0 };
    state.subscriptionIds.push(d.subscriptionId);
    this.fanOuts.set(d.eventId, state);
    return d;
  }

  private async claimRows(want: number, saturated: string[]): Promise<ClaimedDelivery[]> {
    try {
      this.lastRowClaim = Date.now();
      const result = await this.deliveries.claimDue(want, saturated, this.leaseMs);
      this.backlog = result.more || saturated.length > 0;
      return result.claimed;
    } catch (err) {
      this.failures.log('warn', 'claim', {}, `claiming deliveries failed, will retry: ${(err as Error).message}`);
      return [];
    }
  }

  private free(): number {
    return Math.max(0, this.window - this.sending - this.queuedCount - this.recording);
  }

  /**
   * Subscriptions with a full queue are left out of the next claim, so one busy subscriber cannot hog it, and those
   * whose gate is shut here (paused, circuit open, no share of their maxConcurrency): their deliveries wait as rows.
   */
  private saturated(): string[] {
    const full = [...new Set([...this.inFlight.keys(), ...this.queued.keys()])].filter(
      (id) =>
        (this.inFlight.get(id) ?? 0) + (this.queued.get(id)?.length ?? 0) >=
        Math.min(this.gates.admissionCap(id), 2 * this.fairShare()),
    );
    return [...new Set([...full, ...this.gates.excluded()])];
  }

  /**
   * The sending slots each subscriber with work here in the last FAIR_SHARE_WINDOW_MS may hold: all of
   * DELIVERY_CONCURRENCY for one alone (DELIVERY_CONCURRENCY_PER_SUBSCRIPTION still caps it), an equal part for many.
   */
  private fairShare(now = Date.now()): number {
    for (const [id, at] of this.lastWork) if (now - at > FAIR_SHARE_WINDOW_MS) this.lastWork.delete(id);
    return Math.max(MIN_FAIR_SHARE, Math.floor(this.config.DELIVERY_CONCURRENCY / Math.max(1, this.lastWork.size)));
  }

  /**
   * Queues what was claimed or fanned out, up to each subscriber's cap (saturated() reads the same). A claim leaves
   * out only the subscribers full when it started, so one that had just dropped below its cap can come back with
   * a whole claim's rows: queued, they would fill the window for as long as that subscriber takes to send them
   * (seconds, for a slow one) while every other subscriber's events waited for room. The excess waits as rows.
   */
  private enqueueAll(ds: ClaimedDelivery[]) {
    const cap = 2 * this.fairShare();
    const over: ClaimedDelivery[] = [];
    for (const d of ds) {
      const held = (this.inFlight.get(d.subscriptionId) ?? 0) + (this.queued.get(d.subscriptionId)?.length ?? 0);
      if (held >= Math.min(this.gates.admissionCap(d.subscriptionId), cap)) over.push(d);
      else this.enqueue(d);
    }
    if (over.length > 0) {
      this.backlog = true;
      this.setAsideAll(over);
    }
  }

  private enqueue(d: ClaimedDelivery) {
    this.lastWork.set(d.subscriptionId, Date.now());
    this.gates.learn(d);
    if (this.gates.shut(d.subscriptionId)) return this.setAsideAll([d]); // claimed before this replica knew
    const q = this.queued.get(d.subscriptionId) ?? [];
    q.push(d);
    this.queued.set(d.subscriptionId, q);
    this.queuedCount++;
  }

  /**
   * Starts queued deliveries while there are free slots overall and for their subscription, one subscriber at a
   * time in turn: a subscriber that got a slot goes to the back of the line (a Map iterates what is added while
   * it iterates), so the first subscribers in the map cannot take every slot that frees while the others queue.
   */
  private pump() {
    const share = this.fairShare();
    for (const [subscriptionId, q] of this.queued) {
      if (this.sending >= this.config.DELIVERY_CONCURRENCY) return;
      if ((this.inFlight.get(subscriptionId) ?? 0) >= share) continue;
      const go = this.gates.tryStart(subscriptionId, this.inFlight.get(subscriptionId) ?? 0);
      if (!go.start) {
        if (go.retryInMs !== undefined) this.wakePump(go.retryInMs);
        continue;
      }
      this.queued.delete(subscriptionId);
      this.queuedCount--;
      this.start(q.shift()!);
      if (q.length > 0) this.queued.set(subscriptionId, q);
    }
  }

  /** Pumps again in `ms` (a rate-limited subscriber's next token), unless an earlier wake is set. */
  private wakePump(ms: number) {
    const at = Date.now() + ms;
    if (this.pumpTimer && this.pumpAt <= at) return;
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.pumpAt = at;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pumpAt = Infinity;
      if (!this.stopped) this.pump();
    }, ms);
  }

  /** A subscriber's gate shut: what is queued for it here is set aside, none of it attempted. */
  private setAside(subscriptionId: string) {
    const q = this.queued.get(subscriptionId);
    if (!q) return;
    this.queued.delete(subscriptionId);
    this.queuedCount -= q.length;
    this.setAsideAll(q);
  }

  /**
   * Deliveries not to send now: a claimed row is handed back (its subscriber is left out of this replica's claims
   * while its gate is shut); one fanned out from memory is written as a pending row, not attempted, which counts
   * as its answer for its event (so the event's other deliveries, and its plant's next event, are not held up).
   */
  private setAsideAll(ds: ClaimedDelivery[]) {
    const rows = ds.filter((d) => d.stored).map((d) => ({ id: d.id, token: d.lease.token }));
    if (rows.length > 0) this.deliveries.releaseLeases(rows).catch(() => undefined); // else their leases lapse
    for (const d of ds.filter((x) => !x.stored)) {
      const completes = this.answered(d);
      this.recording++;
      this.recordRetrying({ delivery: d, attempt: null, outcome: { kind: 'retry', delayMs: 0 }, completes })
        .catch((err: Error) => this.logger.error(`setting delivery ${d.id} aside failed: ${err.message}`))
        .finally(() => {
          this.recording--;
          this.signal.notify();
        });
    }
  }

  private start(d: ClaimedDelivery) {
    this.sending++;
    this.inFlight.set(d.subscriptionId, (this.inFlight.get(d.subscriptionId) ?? 0) + 1);
    // The slot is freed as soon as the receiver has answered; the outcome is then written in a batch. Order
    // is safe meanwhile: the plant's next delivery is claimable only once this one is recorded as done.
    const release = () => {
      this.sending--;
      const n = (this.inFlight.get(d.subscriptionId) ?? 1) - 1;
      if (n === 0) this.inFlight.delete(d.subscriptionId);
      else this.inFlight.set(d.subscriptionId, n);
      if (!this.stopped) this.pump();
      if (this.backlog || this.events) this.signal.notify();
    };
    const task = this.attempt(d, release).finally(() => {
      this.running.delete(task);
      // A later delivery, or event, of the same plant may now be due.
      if (this.backlog || this.events) this.signal.notify();
    });
    this.running.add(task);
  }

  /**
   * Writes an outcome; while the database is away or too slow (a bounded query timed out), tries again as long as
   * the delivery's lease lasts, rather than let the lease run out and the receiver get it a second time. A
   * statement cancelled or never sent changed nothing; in the rare case that one committed but its answer was
   * lost, the retry adds the attempt to the log twice, which is cheaper than sending the webhook twice.
   */
  private async recordRetrying(record: AttemptRecord): Promise<void> {
    const deadline = record.delivery.lease.until - RECORD_RETRY_MARGIN_MS; // as this claim knows it, renewals included
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.recorder.add(record);
      } catch (err) {
        const waitMs = Math.min(200 * 2 ** (attempt - 1), 2000);
        if (!isDatabaseUnavailable(err) || Date.now() + waitMs >= deadline) throw err;
        this.failures.log('warn', 'record', {}, `recording outcomes failed, retrying: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }

  /**
   * One of an event's deliveries from memory has its answer. The last one to be answered carries the event's
   * subscribers with its record: the statement that writes it marks the event fanned out if every one of them
   * then has its row (see RECORD_FANNED_OUT). So an event is never done with a delivery missing (one whose write
   * failed is sent again, alone, by a fan-out once the lease runs out), and no statement of its own is needed.
   */
  private answered(d: ClaimedDelivery): AttemptRecord['completes'] {
    const state = this.fanOuts.get(d.eventId);
    if (state?.token !== d.lease.token || ++state.answered < state.subscriptionIds.length) return undefined;
    this.fanOuts.delete(d.eventId);
    return state.subscriptionIds;
  }

  /**
   * Whether the delivery may be sent now: its lease must outlast the attempt and the writing of its outcome. One
   * that waited too long for a slot has its lease renewed first (renewLease).
   */
  private leaseLasts(d: ClaimedDelivery): boolean {
    return d.lease.until - Date.now() >= this.config.DELIVERY_TIMEOUT_MS + RECORD_MARGIN_MS;
  }

  /**
   * Extends the delivery's lease, if its claim still holds it. A lease that lapsed and was taken by another claim
   * (or that cannot be renewed now) is not sent on: its holder sends it, once; sending it here as well would send
   * it twice, and perhaps after a later version of its plant.
   */
  private async renewLease(d: ClaimedDelivery): Promise<boolean> {
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
   * Renews, in one batch, the leases of queued deliveries that would soon be too short to send. One whose lease
   * another claim took already leaves the queue unsent. If the database is away, they stay: each is checked again
   * before it is sent.
   */
  private async renewQueued() {
    if (this.renewingQueued || this.stopped) return;
    const horizon = Date.now() + this.config.DELIVERY_TIMEOUT_MS + RECORD_MARGIN_MS + 2 * RENEW_EVERY_MS;
    const due = [...this.queued.values()].flat().filter((d) => d.lease.until < horizon);
    if (due.length === 0) return;
    this.renewingQueued = true;
    try {
      const results = await Promise.all(due.map((d) => this.renewer.add(d)));
      due.forEach((d, i) => {
        if (results[i].renewed.has(d.id)) d.lease.until = Math.max(d.lease.until, results[i].until);
        else if (this.dequeue(d)) this.abandon(d);
      });
      this.signal.notify(); // room may have freed
    } catch (err) {
      this.failures.log('warn', 'renew', {}, `renewing leases failed, will retry: ${(err as Error).message}`);
    } finally {
      this.renewingQueued = false;
    }
  }

  /** Takes a delivery out of its queue unsent; false if it is not queued (any more). */
  private dequeue(d: ClaimedDelivery): boolean {
    const q = this.queued.get(d.subscriptionId);
    const i = q?.indexOf(d) ?? -1;
    if (!q || i < 0) return false;
    q.splice(i, 1);
    if (q.length === 0) this.queued.delete(d.subscriptionId);
    this.queuedCount--;
    return true;
  }

  /**
   * A delivery not sent because its lease is gone. Its event's fan-out (under the same lease) cannot be completed
   * from here: forget it, and leave the event to the lease's holder (or to the next fan-out once it lapses).
   */
  private abandon(d: ClaimedDelivery) {
    if (!d.stored && this.fanOuts.get(d.eventId)?.token === d.lease.token) this.fanOuts.delete(d.eventId);
    this.failures.log(
      'warn',
      'lease lost',
      {},
      `delivery ${d.id} to subscription ${d.subscriptionId} not sent: its lease ran out while it waited for a slot ` +
        `and another claim holds it now (raise DELIVERY_CONCURRENCY_PER_SUBSCRIPTION, or lower the load)`,
    );
  }

  /** Takes out of the queues, unsent, what is queued for subscriptions no longer enabled (`keep` says false). */
  private dropUnsubscribed(keep: (subscriptionId: string) => boolean) {
    for (const [subscriptionId, q] of [...this.queued])
      if (!keep(subscriptionId)) for (const d of [...q]) if (this.dequeue(d)) this.unsubscribed(d);
  }

  /**
   * A delivery not sent because its subscription is no longer enabled (or its copy could not be confirmed). A
   * delivery row is handed back (it stays pending, or the delete has closed it). An event fanned out here is left
   * to its lease: the other deliveries are written with their outcomes without completing it, and once the lease
   * lapses the next fan-out finishes it with the subscriptions enabled then.
   */
  private unsubscribed(d: ClaimedDelivery) {
    if (d.stored) this.deliveries.releaseLeases([{ id: d.id, token: d.lease.token }]).catch(() => undefined);
    else if (this.fanOuts.get(d.eventId)?.token === d.lease.token) this.fanOuts.delete(d.eventId);
  }

  /**
   * Writes an attempt's outcome. If the database refuses this one record for its data (the batch it was in was
   * split until it stood alone, and the others were written), it is written again without the subscriber's reply,
   * the refusal as its error: the outcome counts, and the delivery is not sent again and again.
   */
  private async record(record: AttemptRecord) {
    try {
      await this.recordRetrying(record);
    } catch (err) {
      if (!isDataError(err) || record.attempt === null) throw err;
      const attempt: DeliveryAttempt = {
        ...record.attempt,
        responseBody: null,
        error: `the attempt's record was refused by the database (${(err as Error).message}); its reply is not kept`,
      };
      await this.recordRetrying({ ...record, attempt });
    }
  }

  private async attempt(d: ClaimedDelivery, release: () => void) {
    // Checked without a statement, and before the first await: a delivery with lease to spare goes at once.
    if (!this.leaseLasts(d) && !(await this.renewLease(d))) {
      release();
      this.abandon(d);
      return;
    }
    // Only to a subscription enabled in a copy of them confirmed current a moment ago (see SubscriberCache): never
    // to one whose delete has returned, whichever replica holds the delivery.
    let admitted = this.subscribers.admit(d.subscriptionId);
    if (admitted instanceof Promise) admitted = await admitted;
    if (!admitted) {
      release();
      this.unsubscribed(d);
      return;
    }
    const labels = { subscription: d.subscriptionId };
    this.metrics.deliveries.inc({ ...labels, outcome: 'sent' });
    let result: Awaited<ReturnType<DeliverySender['send']>>;
    try {
      result = await this.sender.send(d);
      // Before its slot frees: a subscriber that asked to wait gets nothing more from here meanwhile.
      if (this.gates.answered(d.subscriptionId, result)) this.setAside(d.subscriptionId);
    } finally {
      release();
    }
    const outcome = decideOutcome(result, d.attempts + 1, this.schedule);
    const completes = d.stored ? undefined : this.answered(d);
    this.recording++;
    try {
      await this.record({ delivery: d, attempt: result, outcome, completes });
    } catch (err) {
      // The lease will expire and the delivery will be sent again: at least once, never lost.
      this.logger.error(`recording attempt of delivery ${d.id} failed: ${(err as Error).message}`);
      return;
    } finally {
      this.recording--;
    }
    if (outcome.kind === 'succeeded') {
      this.metrics.deliveries.inc({ ...labels, outcome: 'succeeded' });
      this.metrics.deliveryLatency.observe(Math.max(0, Date.now() - d.eventTime.getTime()) / 1000);
    } else if (outcome.kind === 'retry') {
      this.metrics.deliveries.inc({ ...labels, outcome: 'retried' });
      this.failures.log(
        'warn',
        d.subscriptionId,
        {},
        `delivery to subscription ${d.subscriptionId} (${origin(d.url)}) failed: ${what(result)}; ` +
          `attempt ${d.attempts + 1}, next in ${Math.round(outcome.delayMs / 1000)}s`,
      );
    } else {
      this.metrics.deliveries.inc({ ...labels, outcome: 'failed' });
      this.failures.log(
        'warn',
        `${d.subscriptionId} for good`,
        {},
        `delivery ${d.id} to subscription ${d.subscriptionId} (${origin(d.url)}) failed for good after ` +
          `${d.attempts + 1} attempts: ${what(result)}` +
          (outcome.disableSubscription ? `; subscription disabled: ${outcome.disableSubscription}` : ''),
      );
    }
  }
}

/** Where a delivery went, without a path or query that may carry a subscriber's own secret. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/** What the subscriber answered, or why there was no answer. */
const what = (r: { status: number | null; error: string | null }) =>
  r.status !== null ? `HTTP ${r.status}` : (r.error ?? 'no answer');
