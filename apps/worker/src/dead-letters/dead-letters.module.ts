import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { ConsumerState } from '../health/consumer-state';
import { DeadLetterArchive } from './dead-letter-archive';

/**
 * Dead letters: plant.created.dlq copied into PostgreSQL for the admin API (list, show, redrive, discard). A
 * denied archive blocks readiness through the ConsumerState the consumer shares. Writing them is the ingest
 * stage's, through dead-letter-publisher.ts (plain functions on the batch's producer, no provider).
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
