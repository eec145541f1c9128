import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { ConsumerState } from '../plant-consumer/plant-batch.server';
import { DeadLetterArchive } from './dead-letter-archive';

/**
 * Dead letters: plant.created.dlq copied into PostgreSQL for the admin API (list, show, redrive, discard). A
 * denied archive blocks readiness through the ConsumerState the consumer shares.
 */
@Module({})
export class DeadLettersModule {
  static forRoot(consumerState: ConsumerState): DynamicModule {
    return {
      module: DeadLettersModule,
      imports: [DatabaseModule],
      providers: [DeadLetterArchive, { provide: ConsumerState, useValue: consumerState }],
    };
  }
}
