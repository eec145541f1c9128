import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { MetricsModule } from '../metrics/metrics.module';
import { BacklogCap } from './backlog-cap';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DELIVERY_INBOX } from './delivery-inbox';
import { DeliverySender } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';
import { SubscriberGates } from './subscriber-gates';
import { SubscriberCache } from './subscriber-cache';

/** Sends the outbox, to the subscriptions held in memory (SubscriberCache, also the ingest's fan-out): claims, hand-overs from the ingest stage (DELIVERY_INBOX), attempts and their outcomes. */
@Module({
  imports: [DatabaseModule, MetricsModule],
  providers: [
    BacklogCap,
    DeliveryDispatcher,
    DeliverySender,
    DeliverySignal,
    SubscriberGates,
    SubscriberCache,
    { provide: DELIVERY_INBOX, useExisting: DeliveryDispatcher },
  ],
  exports: [DELIVERY_INBOX, SubscriberCache],
})
export class DeliveryModule {}
