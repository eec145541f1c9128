import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { BackfillsController } from './backfills.controller';
import { BackfillsService } from './backfills.service';

@Module({ imports: [DatabaseModule], controllers: [BackfillsController], providers: [BackfillsService] })
export class BackfillsModule {}
