import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, WorkerConfig } from '@app/config';
import { Tracing, TracingModule } from '@app/observability';
import { DatabaseModule } from '@app/persistence';
import { BackfillModule } from './backfill/backfill.module';
import { DeadLettersModule } from './dead-letters/dead-letters.module';
import { DeliveryModule } from './delivery/delivery.module';
import { WorkerHealthController } from './health/worker-health.controller';
import { BacklogMonitor } from './metrics/backlog-monitor';
import { MetricsModule } from './metrics/metrics.module';
import { IngestModule } from './ingest/ingest.module';
import { RetentionModule } from './retention/retention.module';
import { ConsumerState } from './health/consumer-state';

/**
 * plant.created in and stored, poison dead-lettered (ingest) → deliveries out (delivery) → old rows pruned
 * (retention); backfills queued at their pace (backfill); the dead-letter topic kept in PostgreSQL for review (dead-letters); counters (metrics); health
 * and the backlog gauge here.
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
        IngestModule.forRoot(consumerState),
        DeliveryModule,
        RetentionModule,
        BackfillModule,
        DeadLettersModule.forRoot(consumerState),
      ],
      controllers: [WorkerHealthController],
      providers: [BacklogMonitor],
    };
  }
}
