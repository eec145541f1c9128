import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { PLANT_CREATED } from '@app/contracts';
import { IngestBatch } from './ingest-batch';
import { IngestService } from './ingest.service';

@Controller()
export class IngestController {
  constructor(private readonly ingest: IngestService) {}

  /** IngestServer delivers a whole fetched batch of the partition here (see ingest.server.ts). */
  @EventPattern(PLANT_CREATED)
  handle(@Payload() batch: IngestBatch): Promise<void> {
    return this.ingest.processBatch(batch);
  }
}
