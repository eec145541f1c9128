import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DeadLetterIdsBody, validateDeadLetterIds } from '@app/contracts';
import { DeadLetterStatus } from '@app/persistence';
import { Actor, AdminReadGuard, AdminWriteGuard } from '../auth/bearer.guards';
import { parseCursor } from '../http/pagination';
import { validatedBody } from '../http/validated-body.pipe';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { DeadLettersService } from './dead-letters.service';

/** Admin API: dead letters, listed, inspected, redriven, discarded. Documented in /openapi.json. */
@ApiExcludeController()
@UseGuards(AdminReadGuard)
@Controller('dead-letters')
export class DeadLettersController {
  constructor(private readonly letters: DeadLettersService) {}

  @Get()
  list(
    @Query('status', validatedParameters('listDeadLetters')) status: DeadLetterStatus | undefined,
    @Query('limit', validatedParameters('listDeadLetters')) limit: number,
    @Query('cursor', validatedParameters('listDeadLetters')) cursor: string | undefined,
  ) {
    return this.letters.list(status, limit, parseCursor(cursor));
  }

  // Before :id, so that "redrive" and "discard" are not taken for ids.
  @Post('redrive')
  @HttpCode(200)
  @UseGuards(AdminWriteGuard)
  redriveMany(@Body(validatedBody(validateDeadLetterIds)) body: DeadLetterIdsBody, @Actor() actor: string) {
    return this.letters.redrive(body.ids, actor);
  }

  @Post('discard')
  @HttpCode(200)
  @UseGuards(AdminWriteGuard)
  discardMany(@Body(validatedBody(validateDeadLetterIds)) body: DeadLetterIdsBody, @Actor() actor: string) {
    return this.letters.discard(body.ids, actor);
  }

  @Get(':id')
  get(@Param('id', validatedParameters('getDeadLetter')) id: string) {
    return this.letters.get(id);
  }

  @Post(':id/redrive')
  @HttpCode(202)
  @UseGuards(AdminWriteGuard)
  redrive(@Param('id', validatedParameters('redriveDeadLetter')) id: string, @Actor() actor: string) {
    return this.letters.redriveOne(id, actor);
  }

  @Post(':id/discard')
  @HttpCode(200)
  @UseGuards(AdminWriteGuard)
  discard(@Param('id', validatedParameters('discardDeadLetter')) id: string, @Actor() actor: string) {
    return this.letters.discardOne(id, actor);
  }
}
