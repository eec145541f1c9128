import { Module } from '@nestjs/common';
import { EVENT_PUBLISHER } from './event-publisher';
import { KafkaEventPublisher } from './kafka-event-publisher';
import { PlantWebhookController } from './plant-webhook.controller';
import { PlantWebhookService } from './plant-webhook.service';

@Module({
  controllers: [PlantWebhookController],
  providers: [PlantWebhookService, KafkaEventPublisher, { provide: EVENT_PUBLISHER, useExisting: KafkaEventPublisher }],
  exports: [EVENT_PUBLISHER],
})
export class PlantWebhookModule {}
