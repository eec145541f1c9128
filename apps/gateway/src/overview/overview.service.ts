import { Injectable } from '@nestjs/common';
import { DeadLetterRepository, DeliveryRepository } from '@app/persistence';
import { mapMinute, OverviewDto } from './overview.dto';

/** What flows, at a glance: the console's overview page. Each figure is one indexed query. */
@Injectable()
export class OverviewService {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly deadLetters: DeadLetterRepository,
  ) {}

  async get(): Promise<OverviewDto> {
    const [deliveries, deadLetters, minutes] = await Promise.all([
      this.deliveries.countByStatus(24),
      this.deadLetters.countDead(),
      this.deliveries.perMinute(60),
    ]);
    return { deliveries, deadLetters, lastHour: minutes.map(mapMinute) };
  }
}
