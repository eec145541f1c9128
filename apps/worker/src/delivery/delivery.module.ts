import { Module } from '@nestjs/common';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DeliverySender } from './delivery-sender';
import { DeliverySignal } from './delivery-signal';

@Module({ providers: [DeliveryDispatcher, DeliverySender, DeliverySignal] })
export class DeliveryModule {}
