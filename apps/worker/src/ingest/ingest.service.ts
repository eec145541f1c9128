import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { EventHeaders } from '@app/contracts';
import { AclNeed, explainKafkaError, workerConsumerGroup } from '@app/kafka';
import {
  addApplyResult,
  ApplyResult,
  emptyApplyResult,
  fannedOutDeliveries,
  FanOutPlan,
  IngestEvent,
  IntakeOffer,
  NO_OFFER,
  PLANT_EVENT_STORE,
  PlantEventStore,
  planFanOut,
  SubscriberSet,
} from '@app/delivery';
import { nestSink, RateLimitedLog, Tracing } from '@app/observability';
import { isDataError, WriteCoalescer } from '@app/persistence';
import { DELIVERY_INBOX, DeliveryInbox } from '../delivery/delivery-inbox';
import { SubscriberCache } from '../subscribers/subscriber-cache';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { BatchPlan, planBatch, PoisonMessage } from './batch-plan';
import { BatchSpans } from './event-spans';
import { fittingEvents, subscribersOf } from './handover-room';
import { publishDeadLetters } from '../dead-letters/dead-letter-publisher';
import { headerString, IngestBatch } from './ingest-batch';
import { ConsumerState } from '../health/consumer-state';
import { LoopReport } from './loop-report';
import { countOutcomes } from './outcome-counts';
import { BatchAbandoned, retryTransient } from './retry';

/** Rows per statement at most, when batches from several partitions are stored together. */
const MAX_ROWS_PER_WRITE = 5000;

/**
 * Stores a batch of plant.created events, then commits it. Poison records go to the dead-letter topic
 * (awaited) before the commit; transient failures are retried in place, holding the partition, never skipping.
 * Batches of all partitions that arrive while a write is in flight are stored together in the next one: at a
 * steady rate each partition's fetch brings only a few events, and a statement (with its commit) per batch
 * cost the database more than the rows did.
 */
@Injectable()
export class IngestService {
  private readonly logger = new Logger(IngestService.name);
  private readonly debug: boolean;
  private readonly writes: WriteCoalescer<IngestEvent[], ApplyResult>;
  private readonly loops: LoopReport;
  private readonly maxHops: number;
  private readonly group: string;
  private readonly keyReuse = new RateLimitedLog(nestSink(this.logger));
  /** The heartbeats of the batches being stored: a write that waits for room keeps their partitions. */
  private readonly waiting = new Set<() => Promise<void>>();

  constructor(
    @Inject(PLANT_EVENT_STORE) private readonly store: PlantEventStore,
    private readonly metrics: WorkerMetrics,
    @Inject(DELIVERY_INBOX) private readonly inbox: DeliveryInbox,
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
    private readonly tracing: Tracing,
    private readonly state: ConsumerState,
    private readonly subscribers: SubscriberCache,
  ) {
    this.group = workerConsumerGroup(config.WORKER_GROUP_ID);
    this.debug = ['debug', 'trace'].includes(config.LOG_LEVEL);
    this.maxHops = config.MAX_WEBHOOK_HOPS;
    this.loops = new LoopReport(metrics, config.MAX_WEBHOOK_HOPS);
    this.writes = new WriteCoalescer(
      (batches) => this.storeAndHandOver(batches.flat()),
      MAX_ROWS_PER_WRITE,
      (events) => events.length,
    );
  }

  /** Store, dead-letter the poison, commit; then count. Retried in place on transient failures. */
  async processBatch(batch: IngestBatch): Promise<void> {
    if (batch.messages.length === 0) return;
    const started = process.hrtime.bigint();
    const plan = planBatch(batch.topic, batch.partition, batch.messages);
    const spans = new BatchSpans(this.tracing, batch, plan, this.group);
    this.logTraces(batch, spans);
    try {
      const beat = () => batch.heartbeat();
      this.waiting.add(beat);
      const { result, unstorable } = await this.retry(batch, 'store', () => {
        spans.storing();
        return this.storeBatch(batch, plan);
      }).finally(() => this.waiting.delete(beat));
      spans.stored(plan);
      const poison = [...plan.poison, ...unstorable];
      const shrunk = await this.retry(batch, 'dead_letter', () => publishDeadLetters(batch, poison));
      this.countDeadLetters(batch, poison, shrunk);
      const last = batch.messages[batch.messages.length - 1].offset;
      await this.retry(batch, 'commit', () => batch.commit(last));
      spans.committed(poison);
      this.record(plan, result, started);
    } catch (err) {
      spans.abandoned((err as Error).message);
      if (err instanceof BatchAbandoned) {
        this.logger.warn(`${batch.topic}[${batch.partition}]: ${err.message}`);
        return;
      }
      throw err;
    }
  }

  /**
   * The batch's events, together with whatever other partitions' batches join the same write. If the database
   * refuses a row's data (say a NUL byte in a name), nothing of that statement is stored; each of its batches
   * stores its events one by one and the unstorable ones become dead letters instead of blocking the partition.
   */
  private async storeBatch(
    batch: IngestBatch,
    plan: BatchPlan,
  ): Promise<{ result: ApplyResult; unstorable: PoisonMessage[] }> {
    try {
      return {
        result: plan.events.length > 0 ? await this.writes.add(plan.events) : emptyApplyResult(),
        unstorable: [],
      };
    } catch (err) {
      if (!isDataError(err)) throw err;
      return this.storeOneByOne(batch, plan);
    }
  }

  /**
   * One write for many batches, fanned out to the subscriptions held in memory. The dispatcher takes on the
   * deliveries of the events it has room for: those are stored leased to it and handed over now, before the dead
   * letters and the offset commits. While its window, or the share of a subscriber the next event goes to, is
   * full, the write waits and stores what fits as room frees: Kafka holds the rest (the batches' heartbeats go on
   * meanwhile). Rows are written only for what must wait: a shut gate's deliveries, a slow subscriber's (see
   * RoomWaits), an event owing more than the window, and everything left when the worker stops. A row costs the
   * database about three times what a hand-over does.
   */
  private async storeAndHandOver(events: IngestEvent[]): Promise<ApplyResult> {
    const total = emptyApplyResult();
    for (let rest = events; rest.length > 0;) {
      const set = await this.subscribers.current();
      const plan = planFanOut(rest, set, this.maxHops);
      const by = Date.now() + this.config.DELIVERY_HANDOVER_WAIT_MS;
      const first = subscribersOf(rest[0].eventId, plan);
      // Each turn, stored or not: under an overload a write stores part after part for longer than a session.
      await this.heartbeat();
      const room = await this.inbox.roomFor(first, plan.pairs.length, by);
      let fit = fittingEvents(rest, plan, { ...room, limit: room.offer.limit, skip: room.offer.skipSubscriptions });
      if (fit === 0 && (room.stopping || first.length > room.window)) fit = rest.length;
      if (fit === 0) {
        if (Date.now() < by) await new Promise((r) => setTimeout(r, 5)); // answered early yet nothing fits: no spin
        continue;
      }
      const part = rest.slice(0, fit);
      const partPlan = fit === rest.length ? plan : planFanOut(part, set, this.maxHops);
      addApplyResult(total, await this.storePart(part, partPlan, set, room.offer));
      rest = rest.slice(fit);
    }
    return total;
  }

  /**
   * Heartbeats for every batch whose write is under way, so that the group does not take these partitions' consumer
   * for gone (kafkajs sends one at most every heartbeat interval; a call in between costs nothing).
   */
  private async heartbeat() {
    await Promise.all([...this.waiting].map((beat) => beat().catch(() => undefined)));
  }

  private async storePart(events: IngestEvent[], plan: FanOutPlan, set: SubscriberSet, offer: IntakeOffer) {
    const result = await this.store.applyEvents(events, offer, this.maxHops, plan);
    if (!result.current) this.subscribers.refresh(); // a subscription changed: its deliveries were written as rows
    this.loops.record(result.suppressed);
    this.inbox.accept(fannedOutDeliveries(events, plan, set, result), {
      events: result.leftForFanOut,
      rowsFor: result.deferredFor,
    });
    return result;
  }

  /** Row by row, so that one row the database refuses does not hold the others back. */
  private async storeOneByOne(
    batch: IngestBatch,
    plan: BatchPlan,
  ): Promise<{ result: ApplyResult; unstorable: PoisonMessage[] }> {
    const byOffset = new Map(batch.messages.map((m) => [m.offset, m]));
    const result = emptyApplyResult();
    const unstorable: PoisonMessage[] = [];
    const set = await this.subscribers.current();
    for (const event of plan.events) {
      try {
        const r = await this.store.applyEvents([event], NO_OFFER, this.maxHops, planFanOut([event], set, this.maxHops));
        this.loops.record(r.suppressed);
        addApplyResult(result, r);
      } catch (err) {
        if (!isDataError(err)) throw err;
        unstorable.push({ message: byOffset.get(event.offset)!, reason: `unstorable: ${(err as Error).message}` });
      }
    }
    this.inbox.accept([], { events: result.outboxed, rowsFor: result.deferredFor });
    return { result, unstorable };
  }

  private retry<T>(batch: IngestBatch, stage: string, fn: () => Promise<T>): Promise<T> {
    // Anything that reaches here is transient: permanent failures were already turned into dead letters.
    return retryTransient(fn, {
      heartbeat: batch.heartbeat,
      shouldContinue: batch.shouldContinue,
      onRetry: (attempt, err, waitMs) => {
        this.metrics.failures.inc({ stage });
        const final = (err as { retriable?: boolean }).retriable === false;
        // Kafka marks some refusals as final (authorization, a topic's limits): retrying holds the partition
        // safely, but only an operator can end it, so say so loudly, naming the ACL, and fail readiness.
        const why = final
          ? explainKafkaError(err, this.config, this.needOf(stage, batch)).message
          : (err as Error).message;
        const line = `${batch.topic}[${batch.partition}] ${stage} failed (attempt ${attempt}), retrying in ${waitMs} ms: ${why}`;
        if (final) {
          this.state.blocked.set(stage, why);
          this.logger.error(`${line} (the broker will not accept this until its cause is fixed)`);
        } else this.logger.warn(line);
      },
    }).then((result) => {
      this.state.blocked.delete(stage);
      return result;
    });
  }

  /** What a denied stage lacks (docs/kafka-security.md): writing dead letters, or committing for the group. */
  private needOf(stage: string, batch: IngestBatch): AclNeed | undefined {
    if (stage === 'dead_letter') return { operation: 'WRITE', resource: 'TOPIC', name: batch.deadLetterTopic };
    if (stage === 'commit') return { operation: 'READ', resource: 'GROUP', name: this.group };
    return undefined;
  }

  /** One line per batch, not per record: a burst of 20,000 poison records must not bury the log. */
  private countDeadLetters(batch: IngestBatch, poison: PoisonMessage[], shrunk: number) {
    if (poison.length === 0) return;
    this.metrics.events.inc({ outcome: 'dead_lettered' }, poison.length);
    const where = `${batch.topic}[${batch.partition}]`;
    const first = poison[0];
    const more =
      poison.length > 1 ? ` (and ${poison.length - 1} more up to @${poison[poison.length - 1].message.offset})` : '';
    const cut =
      shrunk > 0
        ? `; ${shrunk} too large to copy whole were truncated (x-truncated; originals at their x-origin-offset)`
        : '';
    this.logger.error(`${where}@${first.message.offset} dead-lettered: ${first.reason}${more}${cut}`);
  }

  private record(plan: BatchPlan, r: ApplyResult, started: bigint) {
    const now = Date.now();
    const reused = new Set(r.keyReused);
    this.reportKeyReuse(plan.events.filter((row) => reused.has(`${row.partition}:${row.offset}`)));
    for (const [outcome, n] of Object.entries(countOutcomes(plan.events, r))) this.metrics.events.inc({ outcome }, n);
    for (const row of plan.events)
      this.metrics.processingLatency.observe(Math.max(0, now - Date.parse(row.eventTime)) / 1000);
    this.metrics.batchDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }

  /**
   * The gateway refuses a key reused with another plant (409) when it has seen the key; another replica has
   * not, answered 200, and that plant cannot be stored under an id that already means a different one. It is
   * too late to tell the sender, so the operator is told: a warning (rate-limited) and the key_reused count.
   */
  private reportKeyReuse(events: IngestEvent[]) {
    if (events.length === 0) return;
    const e = events[0];
    this.keyReuse.log(
      'warn',
      'key_reused',
      {},
      `event ${e.eventId} (plant ${e.plantId}, ${e.topic}[${e.partition}]@${e.offset}) not stored: its idempotency key ` +
        `was used before with a different plant, through another gateway replica${events.length > 1 ? ` (and ${events.length - 1} more)` : ''}. ` +
        'The sender got 200 for both; ask it to send a new webhook-id for a new plant.',
    );
  }

  /** Continues the gateway's trace in our logs; debug level, since one line per event is a lot at 10k/s. */
  private logTraces(batch: IngestBatch, spans: BatchSpans) {
    if (!this.debug) return;
    for (const m of batch.messages) {
      const trace = spans.traceOf(m.offset);
      this.logger.debug(
        `event ${headerString(m.headers, EventHeaders.eventId)} ${batch.topic}[${batch.partition}]@${m.offset} trace_id=${trace?.traceId} span_id=${trace?.spanId}`,
      );
    }
  }
}
