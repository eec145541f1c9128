import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AdminReadGuard } from '../auth/bearer.guards';
import { OverviewService } from './overview.service';

/** Admin API: GET /overview. Documented in /openapi.json (`getOverview`). */
@ApiExcludeController()
@UseGuards(AdminReadGuard)
@Controller('overview')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get()
  get() {
    return this.overview.get();
  }
}
