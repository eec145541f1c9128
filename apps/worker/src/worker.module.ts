import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, WorkerConfig } from '@app/config';
import { Tracing, TracingModule } from '@app/observability';
import { DatabaseModule } from '@app/persistence';
import { DeadLettersModule } from './dead-letters/dead-letters.module';
import { DeliveryModule } from './delivery/delivery.module';
import { WorkerHealthController } from './health/worker-health.controller';
import { BacklogMonitor } from './metrics/backlog-monitor';
import { MetricsModule } from './metrics/metrics.module';
import { PlantConsumerModule } from './plant-consumer/plant-consumer.module';
import { RetentionModule } from './retention/retention.module';
import { ConsumerState } from './plant-consumer/plant-batch.server';

/**
 * plant.created in (plant-consumer) → store → deliveries out (delivery) → old rows pruned (retention); health,
 * metrics and backlog here.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig, consumerState: ConsumerState, tracing: Tracing): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.withConfig(config, 'worker'),
        TracingModule.forRoot(tracing),
        DatabaseModule,
        MetricsModule,
        PlantConsumerModule.forRoot(consumerState),
        DeliveryModule,
        RetentionModule,
        DeadLettersModule.forRoot(consumerState),
      ],
      controllers: [WorkerHealthController],
      providers: [BacklogMonitor],
    };
  }
}
