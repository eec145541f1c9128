import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { StoreReadGuard } from '../auth/bearer.guards';
import { parseCursor } from '../http/pagination';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { PlantsService } from './plants.service';

/** Read API over the store, for webhook and admin tokens; documented in /openapi.json under `paths`. */
@ApiExcludeController()
@UseGuards(StoreReadGuard)
@Controller('plants')
export class PlantsController {
  constructor(private readonly plants: PlantsService) {}

  @Get(':id')
  get(@Param('id', validatedParameters('getPlant')) id: number) {
    return this.plants.get(id);
  }

  @Get()
  list(
    @Query('limit', validatedParameters('listPlants')) limit: number,
    @Query('cursor', validatedParameters('listPlants')) cursor?: string,
  ) {
    return this.plants.list(limit, parseCursor(cursor));
  }
}
