import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { DeliveryModule } from '../delivery/delivery.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SubscribersModule } from '../subscribers/subscribers.module';
import { ConsumerState } from '../health/consumer-state';
import { IngestController } from './ingest.controller';
import { IngestService } from './ingest.service';

/**
 * plant.created in: stores each batch (DatabaseModule), hands the fresh deliveries to the dispatcher
 * (DeliveryModule's DELIVERY_INBOX) and sends poison to the dead-letter topic (dead-letters/dead-letter-publisher).
 * ConsumerState is shared with the Kafka server (IngestServer) built before Nest.
 */
@Module({})
export class IngestModule {
  static forRoot(consumerState: ConsumerState): DynamicModule {
    return {
      module: IngestModule,
      imports: [DatabaseModule, DeliveryModule, MetricsModule, SubscribersModule],
      controllers: [IngestController],
      providers: [IngestService, { provide: ConsumerState, useValue: consumerState }],
      exports: [ConsumerState],
    };
  }
}
