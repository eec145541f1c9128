import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule, workerEnvSchema } from '@app/config';
import { DatabaseModule } from '@app/persistence';
import { DeliveryModule } from './delivery/delivery.module';
import { DeliveryHandoff } from './delivery/delivery-handoff';
import { WorkerHealthController } from './health/worker-health.controller';
import { BacklogMonitor } from './metrics/backlog-monitor';
import { WorkerMetrics } from './metrics/worker-metrics';
import { PlantConsumerModule } from './plant-consumer/plant-consumer.module';
import { ConsumerState } from './plant-consumer/plant-batch.server';

@Global()
@Module({})
export class WorkerModule {
  static forRoot(env: NodeJS.ProcessEnv, consumerState: ConsumerState): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(workerEnvSchema, env),
        DatabaseModule.forApp('worker'),
        PlantConsumerModule,
        DeliveryModule,
      ],
      controllers: [WorkerHealthController],
      providers: [WorkerMetrics, BacklogMonitor, DeliveryHandoff, { provide: ConsumerState, useValue: consumerState }],
      exports: [WorkerMetrics, DeliveryHandoff, ConsumerState],
    };
  }
}
