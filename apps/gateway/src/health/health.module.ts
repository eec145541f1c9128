import { Global, Module } from '@nestjs/common';
import { PlantWebhookModule } from '../plant-webhook/plant-webhook.module';
import { HealthController } from './health.controller';
import { ShutdownState } from './shutdown-state';

@Global()
@Module({
  imports: [PlantWebhookModule],
  controllers: [HealthController],
  providers: [ShutdownState],
  exports: [ShutdownState],
})
export class HealthModule {}
