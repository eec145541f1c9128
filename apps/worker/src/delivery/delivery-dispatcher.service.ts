import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import {
  AttemptRecord,
  ClaimedDelivery,
  decideOutcome,
  destinationKindOf,
  IntakeOffer,
  NO_OFFER,
  Outbox,
  OUTBOX,
  parseSchedule,
} from '@app/delivery';
import { nestSink, RateLimitedLog } from '@app/observability';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { SubscriberCache } from '../subscribers/subscriber-cache';
import { reportAttempt } from './attempt-report';
import { DeliveryInbox } from './delivery-inbox';
import { DeliverySender } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';
import { DeliverySteps } from './delivery-steps';
import { DeliveryIntake, everyLeftOut } from './delivery-intake';
import { FanOutTracker } from './fan-out-tracker';
import { LeaseKeeper, RENEW_EVERY_MS } from './lease-keeper';
import { OutcomeRecorder } from './outcome-recorder';
import { SendQueue, windowOf } from './send-queue';
import { leftOutOf, roomHostOf } from './room-host';
import { Room, RoomWaits, slowLine } from './room-waits';
import { WakeTimer } from './wake-timer';
import { HEARTBEAT_MS, SubscriberGates } from './subscriber-gates';

/**
 * Moves every delivery this worker takes on through its steps (DeliverySteps: taken → queued → sending →
 * recording → recorded, or set aside on the way); nothing else does. Deliveries come leased (a crashed worker's
 * come back once their lease runs out, same webhook-id) from the ingest stage in this process (DeliveryInbox:
 * fanned out in memory, FanOutTracker) and from DeliveryIntake (fan-outs of events nobody took on, due rows).
 * SendQueue bounds concurrency overall and per subscriber; SubscriberGates says when a subscriber's may go (limits,
 * a pause it asked for, its circuit): what is queued for one whose gate shuts is set aside.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnModuleDestroy, DeliveryInbox {
  private readonly logger = new Logger(DeliveryDispatcher.name);
  /** One line per failing subscriber (or failing statement) every 10 s, however many fail: no flood in the log. */
  private readonly failures = new RateLimitedLog(nestSink(this.logger));
  private readonly schedule: number[];
  private readonly window: number; // DELIVERY_WINDOW: deliveries queued, on the wire, or being recorded
  private readonly free = () => Math.max(0, this.window - this.steps.held());
  private readonly steps = new DeliverySteps(() => this.roomWaits.changed());
  private readonly roomWaits: RoomWaits;
  private readonly queue: SendQueue;
  private readonly fanOuts = new FanOutTracker();
  private readonly leases: LeaseKeeper;
  private readonly recorder: OutcomeRecorder;
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private loop: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];
  private readonly wake = new WakeTimer(() => !this.stopped && this.startQueued()); // a rate's next token is due
  private readonly intake: DeliveryIntake;

  constructor(
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
    @Inject(OUTBOX) private readonly outbox: Outbox,
    private readonly sender: DeliverySender,
    private readonly signal: DeliverySignal,
    private readonly metrics: WorkerMetrics,
    private readonly gates: SubscriberGates,
    private readonly subscribers: SubscriberCache,
  ) {
    this.schedule = parseSchedule(config.DELIVERY_RETRY_SCHEDULE);
    this.window = windowOf(config.DELIVERY_CONCURRENCY, config.DELIVERY_WINDOW);
    this.queue = new SendQueue(config.DELIVERY_CONCURRENCY, this.window, (id) => gates.admissionCap(id));
    this.roomWaits = new RoomWaits(
      roomHostOf(this.queue, gates, {
        window: this.window,
        free: () => this.free(),
        handoverWaitMs: config.DELIVERY_HANDOVER_WAIT_MS,
        judgedSlow: (id, why) => {
          this.metrics.judgedSlow.inc({ subscription: id });
          this.failures.log('warn', `slow ${id}`, {}, slowLine(id, why));
        },
      }),
    );
    this.leases = new LeaseKeeper(outbox, config.DELIVERY_TIMEOUT_MS, this.failures);
    this.recorder = new OutcomeRecorder(outbox, this.failures);
    this.intake = new DeliveryIntake(
      outbox,
      signal,
      {
        free: () => this.free(),
        leftOut: () => leftOutOf(this.queue, this.gates),
        idle: () => this.steps.count('queued') + this.steps.count('sending') === 0,
        sending: () => this.queue.sending,
        take: (ds) => this.take(ds),
      },
      { window: this.window, pollMs: config.DELIVERY_POLL_MS, leaseMs: this.leases.leaseMs },
      this.failures,
    );
    gates.listen({
      shut: (subscriptionId) => this.setAside(this.queue.takeQueue(subscriptionId)),
      opened: () => {
        this.intake.lookAgain(); // its rows are claimable here again; its new events go from memory again
        if (!this.stopped) this.startQueued();
      },
    });
    // What is queued for a subscription no longer enabled leaves the queues unsent.
    subscribers.onChange((set) => {
      for (const id of this.queue.subscriptions())
        if (!set.subscribers.has(id)) for (const d of this.queue.takeQueue(id)) this.leave(d, 'withdrawn');
      this.queue.forgetAllBut(set.subscribers);
    });
    metrics.watchDispatcher(this.window, () => this.steps.inWindow());
  }

  offer(): IntakeOffer {
    const skipSubscriptions = everyLeftOut(leftOutOf(this.queue, this.gates));
    return this.stopped ? NO_OFFER : { limit: this.free(), skipSubscriptions, leaseMs: this.leases.leaseMs };
  }

  roomFor(first: readonly string[], all: number, by: number): Promise<Room<IntakeOffer>> {
    return this.roomWaits.until(first, all, by, this.stopped, () => this.offer());
  }

  accept(fanned: ClaimedDelivery[], left: { events: number; rowsFor: string[] }) {
    if (this.stopped)
      void this.leases.handBackEvents(fanned); // stopping between offer() and here
    else this.take(fanned);
    if (left.events > 0) this.intake.moreEvents();
    const claimable = this.intake.rowsWritten(left.rowsFor, (id) => this.gates.shut(id));
    if (left.events > 0 || claimable) this.signal.notify();
  }

  onApplicationBootstrap() {
    // The limits and health first, so that the first claims already respect them.
    this.loop = this.gates.refresh().then(() => this.intake.run());
    this.timers.push(setInterval(() => void this.renewQueued(), RENEW_EVERY_MS));
    this.timers.push(setInterval(() => void this.gates.refresh(), HEARTBEAT_MS));
  }

  /** Stops claiming, hands back what is queued, waits for attempts on the wire, then hands back open events. */
  async onModuleDestroy() {
    this.stopped = true;
    this.roomWaits.changed(true);
    for (const t of this.timers) clearInterval(t);
    this.wake.stop();
    this.intake.stop();
    await this.loop;
    const queued = this.queue.subscriptions().flatMap((id) => this.queue.takeQueue(id));
    for (const d of queued) this.steps.move(d, 'handed-back'); // a row by itself, a fan-out with its event below
    await this.leases.handBack(queued.filter((d) => d.hasRow));
    await Promise.allSettled([...this.running]);
    await this.outbox.releaseLeases([], this.fanOuts.leased()).catch(() => undefined);
    await this.gates.stop();
  }

  /**
   * Takes on what was claimed, fanned out or handed over, up to each subscriber's cap (as leftOutOf): a claim leaves
   * out only those full when it started, and one just below could fill the window. The excess waits as rows.
   */
  private take(ds: ClaimedDelivery[]) {
    const share = this.queue.windowShare();
    const over: ClaimedDelivery[] = [];
    for (const d of ds) {
      this.steps.take(d);
      if (!d.hasRow) this.fanOuts.track(d);
      this.gates.learn(d);
      // Over its share (claimed again as its queue drains) or its gate shut (claimed before this replica knew; its
      // rows wait until the gate opens, opened()): it waits as a row.
      const shut = this.gates.shut(d.subscriptionId);
      const full = !shut && this.queue.isFull(d.subscriptionId, share);
      if (full) this.intake.moreRows();
      if (full || shut) over.push(d);
      else {
        this.queue.push(d);
        this.steps.move(d, 'queued');
      }
    }
    this.setAside(over);
    this.startQueued();
  }

  /**
   * Deliveries not to send now: a claimed row is handed back (its subscriber is left out of this replica's claims
   * while its gate is shut); one fanned out from memory is written as a pending row, not attempted, which counts
   * as its answer for its event (so the event's other deliveries, and its plant's next event, are not held up).
   */
  private setAside(ds: ClaimedDelivery[]) {
    const rows = ds.filter((d) => d.hasRow);
    for (const d of rows) this.steps.move(d, 'handed-back');
    void this.leases.handBack(rows);
    for (const d of ds.filter((x) => !x.hasRow)) {
      const record: AttemptRecord = {
        delivery: d,
        attempt: null,
        outcome: { kind: 'retry', delayMs: 0 },
        completes: this.fanOuts.answered(d),
      };
      void this.record(d, record, 'setting delivery aside').then(() => this.signal.notify());
    }
  }

  /** Starts queued deliveries while there are slots; wakes again when a rate-limited subscriber's token is due. */
  private startQueued() {
    const retryInMs = this.queue.startInTurn(
      (id, inFlight) => this.gates.tryStart(id, inFlight),
      (d) => this.start(d),
    );
    if (retryInMs !== undefined) this.wake.in(retryInMs);
  }

  private start(d: ClaimedDelivery) {
    this.steps.move(d, 'sending');
    const task = this.attempt(d)
      .catch((err: Error) => {
        // A bug in an attempt: it leaves the window (its lease brings it back), and says so.
        if (['sending', 'recording'].includes(this.steps.stepOf(d) ?? '')) this.steps.move(d, 'unrecorded');
        this.logger.error(`delivery ${d.id}: ${err.message}`);
      })
      .finally(() => {
        this.running.delete(task);
        this.intake.roomFreed(); // a later delivery, or event, of the same plant may now be due
      });
    this.running.add(task);
  }

  /** The slot is free as soon as the receiver has answered (or the attempt ended before it was sent). */
  private freeSlot(d: ClaimedDelivery) {
    this.queue.finished(d);
    this.roomWaits.changed(); // its subscriber may have room again
    if (!this.stopped) this.startQueued();
    this.intake.roomFreed();
  }

  /**
   * sending → recording. Order is safe meanwhile: the plant's next delivery is claimable only once this one is
   * recorded as done.
   */
  private async attempt(d: ClaimedDelivery) {
    // Checked without a statement, and before the first await: a delivery with lease to spare goes at once.
    if (!this.leases.lasts(d) && !(await this.leases.renew(d))) return this.leave(d, 'lease-lost', true);
    // Only to a subscription enabled in a copy of them confirmed current a moment ago (see SubscriberCache): never
    // to one whose delete has returned, whichever replica holds the delivery.
    let admitted = this.subscribers.admit(d.subscriptionId);
    if (admitted instanceof Promise) admitted = await admitted;
    if (!admitted) return this.leave(d, 'withdrawn', true);
    this.metrics.deliveries.inc({ subscription: d.subscriptionId, kind: destinationKindOf(d.url), outcome: 'sent' });
    let result: Awaited<ReturnType<DeliverySender['send']>>;
    try {
      result = await this.sender.send(d);
      // Before its slot frees: a subscriber that asked to wait gets nothing more from here meanwhile.
      if (this.gates.answered(d.subscriptionId, result)) this.setAside(this.queue.takeQueue(d.subscriptionId));
    } catch (err) {
      this.logger.error(`sending delivery ${d.id} failed: ${(err as Error).message}`);
      return this.leave(d, 'unrecorded'); // its slot is freed below
    } finally {
      this.freeSlot(d);
    }
    const outcome = decideOutcome(result, d.attempts + 1, this.schedule);
    const record = { delivery: d, attempt: result, outcome, completes: this.fanOuts.answered(d) };
    if (await this.record(d, record, 'recording attempt of delivery'))
      reportAttempt(this.metrics, this.failures, d, result, outcome);
  }

  /** recording → recorded, or unrecorded: the lease will expire and it is sent again (at least once, never lost). */
  private async record(d: ClaimedDelivery, record: AttemptRecord, what: string): Promise<boolean> {
    this.steps.move(d, 'recording');
    try {
      await this.recorder.record(record);
      this.steps.move(d, 'recorded');
      return true;
    } catch (err) {
      this.steps.move(d, 'unrecorded');
      this.logger.error(`${what} ${d.id} failed: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * A delivery leaves unsent. Lease lost: another claim holds it and sends it. Withdrawn (subscription no longer
   * enabled, or its copy not confirmed): a row is handed back (it stays pending, or the delete closed it). An event
   * fanned out here is left to its lease: the next fan-out finishes it.
   */
  private leave(d: ClaimedDelivery, why: 'lease-lost' | 'withdrawn' | 'unrecorded', onWire = false) {
    if (onWire) this.freeSlot(d);
    this.steps.move(d, why);
    if (why !== 'unrecorded') this.fanOuts.forget(d); // an unrecorded one's event is handed back at stop
    if (why === 'withdrawn' && d.hasRow) void this.leases.handBack([d]);
    if (why === 'lease-lost') this.leases.lost(d);
  }

  /** Renews, in one batch, the leases of queued deliveries that would soon be too short; drops those lost. */
  private async renewQueued() {
    const lost = this.stopped ? null : await this.leases.renewSoonShort(this.queue.queued());
    if (lost === null) return;
    for (const d of lost) if (this.queue.remove(d)) this.leave(d, 'lease-lost');
    this.signal.notify(); // room may have freed
  }
}
