import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { validateBackfillCreate } from '@app/contracts';
import { Actor, AdminReadGuard, AdminWriteGuard } from '../auth/bearer.guards';
import { validatedBody } from '../http/validated-body.pipe';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { BackfillsService } from './backfills.service';

/** Admin API: a subscription's backfills. Documented in /openapi.json (the `adminAuth` scheme). */
@ApiExcludeController()
@UseGuards(AdminReadGuard)
@Controller('subscriptions/:id/backfills')
export class BackfillsController {
  constructor(private readonly backfills: BackfillsService) {}

  @Post()
  @UseGuards(AdminWriteGuard)
  create(
    @Param('id', validatedParameters('createBackfill')) id: string,
    @Body(validatedBody(validateBackfillCreate, { optional: true })) body: Parameters<BackfillsService['create']>[1],
    @Actor() actor: string,
  ) {
    return this.backfills.create(id, body, actor);
  }

  @Get()
  list(@Param('id', validatedParameters('listBackfills')) id: string) {
    return this.backfills.list(id);
  }

  @Get(':backfillId')
  get(
    @Param('id', validatedParameters('getBackfill')) id: string,
    @Param('backfillId', validatedParameters('getBackfill')) backfillId: string,
  ) {
    return this.backfills.get(id, backfillId);
  }

  @Post(':backfillId/cancel')
  @HttpCode(200)
  @UseGuards(AdminWriteGuard)
  cancel(
    @Param('id', validatedParameters('cancelBackfill')) id: string,
    @Param('backfillId', validatedParameters('cancelBackfill')) backfillId: string,
    @Actor() actor: string,
  ) {
    return this.backfills.cancel(id, backfillId, actor);
  }
}
