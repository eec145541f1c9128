import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MAX_PLANT_ID } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { Page, PlantRepository, StoredPlant } from '@app/persistence';
import { WebhookAuthGuard } from '../auth/bearer.guards';
import { parseCursor, parseLimit } from '../http/pagination';

/** Read API over the store, protected by the webhook tokens; documented in /openapi.json under `paths`. */
@ApiExcludeController()
@UseGuards(WebhookAuthGuard)
@Controller('plants')
export class PlantsController {
  constructor(private readonly plants: PlantRepository) {}

  @Get(':id')
  async get(@Param('id') raw: string): Promise<StoredPlant> {
    const id = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
    if (!(id >= 1 && id <= MAX_PLANT_ID)) throw ProblemException.of('notFound', `No plant with id ${raw}`);
    const plant = await this.plants.findPlant(id);
    if (!plant) throw ProblemException.of('notFound', `No plant with id ${id}`);
    return plant;
  }

  @Get()
  list(@Query('limit') limit?: string, @Query('cursor') cursor?: string): Promise<Page<StoredPlant>> {
    return this.plants.listPlants(parseLimit(limit), parseCursor(cursor));
  }
}
