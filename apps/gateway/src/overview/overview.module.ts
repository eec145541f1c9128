import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { ConsumerLagReader } from './consumer-lag.reader';
import { OverviewController } from './overview.controller';
import { OverviewService } from './overview.service';

@Module({
  imports: [DatabaseModule],
  controllers: [OverviewController],
  providers: [OverviewService, ConsumerLagReader],
})
export class OverviewModule {}
