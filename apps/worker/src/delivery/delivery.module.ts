import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { MetricsModule } from '../metrics/metrics.module';
import { BacklogCap } from './backlog-cap';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DELIVERY_INBOX } from './delivery-inbox';
import { DeliverySender } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';
import { SubscriberGates } from './subscriber-gates';
import { SubscribersModule } from '../subscribers/subscribers.module';

/**
 * Sends deliveries to the subscriptions held in memory (SubscribersModule): claims, hand-overs from the ingest
 * stage (DELIVERY_INBOX), attempts and their outcomes.
 */
@Module({
  imports: [DatabaseModule, MetricsModule, SubscribersModule],
  providers: [
    BacklogCap,
    DeliveryDispatcher,
    DeliverySender,
    DeliverySignal,
    SubscriberGates,
    { provide: DELIVERY_INBOX, useExisting: DeliveryDispatcher },
  ],
  exports: [DELIVERY_INBOX],
})
export class DeliveryModule {}
