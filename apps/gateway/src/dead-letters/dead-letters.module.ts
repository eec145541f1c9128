import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { PlantWebhookModule } from '../plant-webhook/plant-webhook.module';
import { DeadLettersController } from './dead-letters.controller';
import { DeadLettersService } from './dead-letters.service';

/** Dead letters: redrive publishes through the webhook's own producer (acks=all, the same drain). */
@Module({
  imports: [DatabaseModule, PlantWebhookModule],
  controllers: [DeadLettersController],
  providers: [DeadLettersService],
})
export class DeadLettersModule {}
