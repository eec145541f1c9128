import { Injectable } from '@nestjs/common';
import { ProblemException } from '@app/observability';
import { PlantRepository } from '@app/persistence';
import { Page, toPage } from '../http/pagination';
import { mapPlant, StoredPlantDto } from './plant.dto';

@Injectable()
export class PlantsService {
  constructor(private readonly plants: PlantRepository) {}

  async get(id: number): Promise<StoredPlantDto> {
    const row = await this.plants.findById(id);
    if (!row)
      throw ProblemException.of(
        'notFound',
        `No plant with id ${id} is stored (yet: a plant accepted a moment ago may still be on its way)`,
      );
    return mapPlant(row);
  }

  async list(limit: number, beforeSeq: number | null): Promise<Page<StoredPlantDto>> {
    return toPage(await this.plants.listNewest(limit + 1, beforeSeq), limit, mapPlant);
  }
}
