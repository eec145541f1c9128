import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';

@Module({ imports: [DatabaseModule], controllers: [DeliveriesController], providers: [DeliveriesService] })
export class DeliveriesModule {}
