import { Module } from '@nestjs/common';
import { WebhookAuthGuard } from '../auth/bearer.guards';
import { JsonBodyGuard } from '../http/json-body.guard';
import { EVENT_PUBLISHER } from './event-publisher';
import { KafkaEventPublisher } from './kafka-event-publisher';
import { PlantWebhookService } from './plant-webhook.service';

/**
 * The New Plant webhook: its service and publisher, and the guards its route runs (servePlantWebhook registers
 * the route itself on the Fastify instance, not as a controller).
 */
@Module({
  providers: [
    PlantWebhookService,
    KafkaEventPublisher,
    { provide: EVENT_PUBLISHER, useExisting: KafkaEventPublisher },
    WebhookAuthGuard,
    JsonBodyGuard,
  ],
  exports: [EVENT_PUBLISHER],
})
export class PlantWebhookModule {}
