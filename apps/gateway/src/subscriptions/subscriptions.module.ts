import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { SubscriptionsController } from './subscriptions.controller';
import { SubscriptionsService } from './subscriptions.service';

@Module({ imports: [DatabaseModule], controllers: [SubscriptionsController], providers: [SubscriptionsService] })
export class SubscriptionsModule {}
