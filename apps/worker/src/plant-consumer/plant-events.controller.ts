import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { PLANT_CREATED } from '@app/contracts';
import { PlantBatch } from './plant-batch';
import { PlantIngestService } from './plant-ingest.service';

@Controller()
export class PlantEventsController {
  constructor(private readonly ingest: PlantIngestService) {}

  /** PlantBatchServer delivers a whole fetched batch of the partition here (see plant-batch.server.ts). */
  @EventPattern(PLANT_CREATED)
  handle(@Payload() batch: PlantBatch): Promise<void> {
    return this.ingest.processBatch(batch);
  }
}
