import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AdminReadGuard } from '../auth/bearer.guards';
import { optionalDate } from '../http/dates';
import { parseCursor } from '../http/pagination';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { AuditService } from './audit.service';

/** Admin API: who changed what, when. Documented in /openapi.json (`listAudit`). */
@ApiExcludeController()
@UseGuards(AdminReadGuard)
@Controller('audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  list(
    @Query('subscriptionId', validatedParameters('listAudit')) subscriptionId: string | undefined,
    @Query('since', validatedParameters('listAudit')) since: string | undefined,
    @Query('until', validatedParameters('listAudit')) until: string | undefined,
    @Query('limit', validatedParameters('listAudit')) limit: number,
    @Query('cursor', validatedParameters('listAudit')) cursor: string | undefined,
  ) {
    return this.audit.list(
      { subscriptionId, since: optionalDate(since), until: optionalDate(until) },
      limit,
      parseCursor(cursor),
    );
  }
}
