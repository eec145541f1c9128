import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { DeadLetterArchive } from './dead-letter-archive';

/** Dead letters: plant.created.dlq copied into PostgreSQL for the admin API (list, show, redrive, discard). */
@Module({ imports: [DatabaseModule], providers: [DeadLetterArchive] })
export class DeadLettersModule {}
