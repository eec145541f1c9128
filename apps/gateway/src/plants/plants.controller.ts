import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MAX_PLANT_ID } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { decodeCursor, Page, PlantRepository, StoredPlant } from '@app/persistence';
import { WebhookAuthGuard } from '../auth/bearer.guards';

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

export function parseLimit(raw: string | undefined, fallback = 50, max = 500): number {
  if (raw === undefined) return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw ProblemException.of('validation', `limit must be an integer from 1 to ${max}`, {
      errors: [{ field: 'limit', message: `must be an integer from 1 to ${max}` }],
    });
  }
  return n;
}

export function parseCursor(raw: string | undefined): number | null {
  if (raw === undefined || raw === '') return null;
  const seq = decodeCursor(raw);
  if (seq === null) {
    throw ProblemException.of('validation', 'cursor is not one this API issued', {
      errors: [{ field: 'cursor', message: 'is not valid' }],
    });
  }
  return seq;
}
