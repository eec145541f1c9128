import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { EventHeaders, NewPlant, newPlantCreatedEvent, PLANT_CREATED_TOPIC } from '@app/contracts';
import { continueTrace, ProblemException } from '@app/observability';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { EVENT_PUBLISHER, EventPublisher } from './event-publisher';

export interface WebhookMeta {
  /** `webhook-id` (Standard Webhooks) or `Idempotency-Key`: a retry with the same key keeps its event id. */
  idempotencyKey?: string;
  traceparent?: string;
  requestId?: string;
}

/** Turns a valid New Plant into a plant.created event and answers only once Kafka has it. */
@Injectable()
export class PlantWebhookService {
  private readonly logger = new Logger(PlantWebhookService.name);

  constructor(
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
    private readonly metrics: GatewayMetrics,
  ) {}

  async accept(plant: NewPlant, meta: WebhookMeta): Promise<{ eventId: string }> {
    const event = newPlantCreatedEvent(plant, { source: this.config.EVENT_SOURCE, idempotencyKey: meta.idempotencyKey });
    const trace = continueTrace(meta.traceparent);
    const started = process.hrtime.bigint();
    this.metrics.publishesInFlight.inc();
    try {
      await this.publisher.publish(
        PLANT_CREATED_TOPIC,
        {
          key: String(plant.id), // per-plant ordering: one plant, one partition
          value: JSON.stringify(event),
          headers: {
            [EventHeaders.eventId]: event.id,
            [EventHeaders.type]: event.type,
            [EventHeaders.traceparent]: trace.traceparent,
            'content-type': 'application/cloudevents+json',
          },
        },
        this.config.PUBLISH_TIMEOUT_MS,
      );
      this.observe(started, 'acked');
    } catch (err) {
      this.observe(started, 'failed');
      this.logger.warn(`event ${event.id} not acknowledged by Kafka: ${(err as Error).message} (request ${meta.requestId})`);
      throw ProblemException.of(
        'unavailable',
        'The event could not be stored durably; nothing was accepted. Retry with the same webhook-id.',
        {},
        { 'retry-after': '5' },
      );
    } finally {
      this.metrics.publishesInFlight.dec();
    }
    return { eventId: event.id };
  }

  private observe(started: bigint, outcome: string) {
    this.metrics.publishLatency.observe({ outcome }, Number(process.hrtime.bigint() - started) / 1e9);
  }
}
