import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { MetricsModule } from '../metrics/metrics.module';
import { SubscriberCache } from './subscriber-cache';

/**
 * The enabled subscriptions in memory (SubscriberCache), one copy per worker: ingest fans a batch out from it and
 * delivery admits a send only to a subscription it holds.
 */
@Module({
  imports: [DatabaseModule, MetricsModule],
  providers: [SubscriberCache],
  exports: [SubscriberCache],
})
export class SubscribersModule {}
