import { Module } from '@nestjs/common';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { DeliverySender } from './delivery-sender';

@Module({ providers: [DeliveryDispatcher, DeliverySender] })
export class DeliveryModule {}
