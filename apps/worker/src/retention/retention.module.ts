import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { MetricsModule } from '../metrics/metrics.module';
import { RetentionPruner } from './retention-pruner';

/** Retention: prunes what grows with every event (processed event ids, finished deliveries). */
@Module({ imports: [DatabaseModule, MetricsModule], providers: [RetentionPruner], exports: [RetentionPruner] })
export class RetentionModule {}
