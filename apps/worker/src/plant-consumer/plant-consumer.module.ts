import { Module } from '@nestjs/common';
import { PlantEventsController } from './plant-events.controller';
import { PlantIngestService } from './plant-ingest.service';

@Module({ controllers: [PlantEventsController], providers: [PlantIngestService] })
export class PlantConsumerModule {}
