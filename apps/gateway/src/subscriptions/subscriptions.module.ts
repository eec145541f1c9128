import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { SubscriptionsController } from './subscriptions.controller';
import { SubscriptionTester } from './subscription-tester';
import { SubscriptionsService } from './subscriptions.service';

@Module({
  imports: [DatabaseModule],
  controllers: [SubscriptionsController],
  providers: [SubscriptionsService, SubscriptionTester],
})
export class SubscriptionsModule {}
