import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { DeliveryModule } from '../delivery/delivery.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ConsumerState } from './plant-batch.server';
import { PlantEventsController } from './plant-events.controller';
import { PlantIngestService } from './plant-ingest.service';

/**
 * plant.created in: stores each batch (DatabaseModule) and hands the fresh deliveries to the dispatcher
 * (DeliveryModule's DELIVERY_INBOX). ConsumerState is shared with the Kafka server built before Nest.
 */
@Module({})
export class PlantConsumerModule {
  static forRoot(consumerState: ConsumerState): DynamicModule {
    return {
      module: PlantConsumerModule,
      imports: [DatabaseModule, DeliveryModule, MetricsModule],
      controllers: [PlantEventsController],
      providers: [PlantIngestService, { provide: ConsumerState, useValue: consumerState }],
      exports: [ConsumerState],
    };
  }
}
