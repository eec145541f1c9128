import { Injectable } from '@nestjs/common';
import { DeadLetterRepository, DeliveryRepository, PlantRepository } from '@app/persistence';
import { ConsumerLagReader } from './consumer-lag.reader';
import { mapMinute, OverviewDto } from './overview.dto';

/** What flows, at a glance: the console's overview page. Each figure is one indexed query, or the broker's. */
@Injectable()
export class OverviewService {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly deadLetters: DeadLetterRepository,
    private readonly plants: PlantRepository,
    private readonly lag: ConsumerLagReader,
  ) {}

  async get(): Promise<OverviewDto> {
    const [deliveries, deadLetters, minutes, stored, consumerLag] = await Promise.all([
      this.deliveries.countByStatus(24),
      this.deadLetters.countDead(),
      this.deliveries.perMinute(60),
      this.plants.countStoredSince(24),
      this.lag.lag(),
    ]);
    return { events: { stored, consumerLag }, deliveries, deadLetters, lastHour: minutes.map(mapMinute) };
  }
}
