import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { BackfillRunner } from './backfill-runner';

@Module({ imports: [DatabaseModule], providers: [BackfillRunner] })
export class BackfillModule {}
