import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { EventHeaders, NewPlant, newPlantCreatedEvent, PlantCreatedEvent } from '@app/contracts';
import { explainKafkaError, PublishTimeoutError, topicNamesFrom } from '@app/kafka';
import {
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_KAFKA_MESSAGE_KEY,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  failSpan,
  nestSink,
  Parent,
  ProblemException,
  RateLimitedLog,
  SpanKind,
  Tracing,
} from '@app/observability';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { EVENT_PUBLISHER, EventPublisher } from './event-publisher';
import { IdempotencyKeys } from './idempotency-keys';

export interface WebhookMeta {
  /** `webhook-id` (Standard Webhooks) or `Idempotency-Key`: a retry with the same key keeps its event id. */
  idempotencyKey?: string;
  /** The request's span when tracing is on, else the sender's `traceparent` header: the Kafka send's parent. */
  trace?: Parent;
  requestId?: string;
  /** From a forwarding Plant Store: deliveries so far, and the event that started the chain. */
  hops?: number;
  origin?: string;
}

/**
 * What a 503 tells the sender. `not_accepted`: the event never left the gateway (shed, or withdrawn from the
 * queue before it was sent). `unknown`: it was sent and Kafka did not answer in time, so it may yet be
 * written, as with Kafka's own producer after delivery.timeout.ms. Either way the sender retries with the
 * idempotency key the 503 names, and the worker stores the plant once.
 */
export type PublishOutcome = 'acked' | 'not_accepted' | 'unknown';

/** Turns a valid New Plant into a plant.created event and answers only once Kafka has it. */
@Injectable()
export class PlantWebhookService {
  private readonly logger = new Logger(PlantWebhookService.name);
  /** During a broker outage every webhook fails alike: one line per outcome every 10 s says so. */
  private readonly unacknowledged = new RateLimitedLog(nestSink(this.logger));
  private inFlight = 0;
  private readonly keys = new IdempotencyKeys();

  constructor(
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
    private readonly metrics: GatewayMetrics,
    private readonly tracing: Tracing,
  ) {
    metrics.watchBounds(config.MAX_PUBLISHES_IN_FLIGHT, {
      limit: this.keys.maxKeys,
      count: () => this.keys.size,
    });
  }

  async accept(plant: NewPlant, meta: WebhookMeta): Promise<{ eventId: string }> {
    // Without a key of the sender's, one is made here: a 503 hands it back, so even that sender's retry is
    // recognised as the same event.
    const idempotencyKey = meta.idempotencyKey ?? `ps_${randomUUID()}`;
    if (meta.idempotencyKey !== undefined && this.keys.check(meta.idempotencyKey, plant) === 'different')
      throw ProblemException.of(
        'conflict',
        `The idempotency key "${meta.idempotencyKey}" (webhook-id) was already used for a different plant. ` +
          'A retry must resend the same body; a new webhook needs a new webhook-id.',
        { idempotencyKey: meta.idempotencyKey } as never,
      );
    if (this.inFlight >= this.config.MAX_PUBLISHES_IN_FLIGHT) {
      this.metrics.publishesShed.inc();
      throw unavailable(
        'not_accepted',
        idempotencyKey,
        null,
        '1',
        `${this.inFlight} webhooks are already waiting for Kafka; this one was not accepted. Retry in a second`,
      );
    }
    const event = newPlantCreatedEvent(plant, {
      source: this.config.EVENT_SOURCE,
      idempotencyKey,
      hops: meta.hops,
      origin: meta.origin,
    });
    const topic = topicNamesFrom(this.config).plantCreated;
    const key = String(plant.id); // per-plant ordering: one plant, one partition
    // The PRODUCER span; its context rides in the record's traceparent, so the worker's spans join this trace.
    const span = this.tracing.startSpan(
      `send ${topic}`,
      SpanKind.PRODUCER,
      {
        [ATTR_MESSAGING_SYSTEM]: 'kafka',
        [ATTR_MESSAGING_OPERATION_TYPE]: 'send',
        [ATTR_MESSAGING_OPERATION_NAME]: 'send',
        [ATTR_MESSAGING_DESTINATION_NAME]: topic,
        [ATTR_MESSAGING_MESSAGE_ID]: event.id,
        [ATTR_MESSAGING_KAFKA_MESSAGE_KEY]: key,
      },
      meta.trace,
    );
    const record = {
      key,
      value: JSON.stringify(event),
      headers: {
        [EventHeaders.eventId]: event.id,
        [EventHeaders.type]: event.type,
        [EventHeaders.traceparent]: this.tracing.traceparent(span)!,
        'content-type': 'application/cloudevents+json',
      },
    };
    const started = process.hrtime.bigint();
    this.inFlight++;
    this.metrics.publishesInFlight.inc();
    try {
      await this.publisher.publish(topic, record, this.config.PUBLISH_TIMEOUT_MS);
      this.observe(started, 'acked');
      span.end();
      return { eventId: event.id };
    } catch (err) {
      const outcome: PublishOutcome = err instanceof PublishTimeoutError && !err.sent ? 'not_accepted' : 'unknown';
      this.observe(started, outcome);
      failSpan(span, outcome === 'unknown' ? 'publish_unconfirmed' : 'publish_not_accepted', (err as Error).message);
      span.end();
      this.unacknowledged.log(
        'warn',
        outcome,
        {},
        `event ${event.id} not acknowledged by Kafka (${outcome}): ${reason(err, this.config)} (request ${meta.requestId})`,
      );
      throw unavailable(
        outcome,
        idempotencyKey,
        event,
        '5',
        outcome === 'unknown'
          ? `Kafka did not confirm the event within ${this.config.PUBLISH_TIMEOUT_MS} ms; it may still be stored`
          : 'Kafka could not take the event in time; it was not accepted',
      );
    } finally {
      this.inFlight--;
      this.metrics.publishesInFlight.dec();
    }
  }

  private observe(started: bigint, outcome: PublishOutcome) {
    this.metrics.publishLatency.observe({ outcome }, Number(process.hrtime.bigint() - started) / 1e9);
  }
}

/** A denial or a refused login says which ACL or variable; a timeout keeps its own words. */
const reason = (err: unknown, config: GatewayConfig) =>
  err instanceof PublishTimeoutError ? err.message : explainKafkaError(err, config).message;

function unavailable(
  outcome: PublishOutcome,
  key: string,
  event: PlantCreatedEvent | null,
  retryAfter: string,
  what: string,
) {
  return ProblemException.of(
    'unavailable',
    `${what}. Retry with the header "webhook-id: ${key}" so that the plant is stored once, whatever happened to this attempt.`,
    { outcome, idempotencyKey: key, ...(event ? { eventId: event.id } : {}) },
    { 'retry-after': retryAfter },
  );
}
