import { Module } from '@nestjs/common';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { PlantWebhookModule } from '../plant-webhook/plant-webhook.module';
import { HealthController } from './health.controller';

@Module({ imports: [PlantWebhookModule, LifecycleModule], controllers: [HealthController] })
export class HealthModule {}
