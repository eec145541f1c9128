import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { validateSubscriptionCreate, validateSubscriptionTest, validateSubscriptionUpdate } from '@app/contracts';
import { Actor, AdminReadGuard, AdminWriteGuard, CanWrite, ConfinedTo } from '../auth/bearer.guards';
import { validatedBody } from '../http/validated-body.pipe';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { SubscriptionsService } from './subscriptions.service';

/** Admin API: who receives the New Plant webhook. Documented in /openapi.json (the `adminAuth` scheme). */
@ApiExcludeController()
@UseGuards(AdminReadGuard)
@Controller('subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post()
  @UseGuards(AdminWriteGuard)
  create(
    @Body(validatedBody(validateSubscriptionCreate)) body: Parameters<SubscriptionsService['create']>[0],
    @Actor() actor: string,
  ) {
    return this.subscriptions.create(body, actor);
  }

  // A read token sees a subscriber URL without the credentials it may carry (see urlForReader).
  @Get()
  list(@CanWrite() canWrite: boolean) {
    return this.subscriptions.list(canWrite);
  }

  @Get(':id')
  get(@Param('id', validatedParameters('getSubscription')) id: string, @CanWrite() canWrite: boolean) {
    return this.subscriptions.get(id, canWrite);
  }

  @Patch(':id')
  @UseGuards(AdminWriteGuard)
  update(
    @Param('id', validatedParameters('updateSubscription')) id: string,
    @Body(validatedBody(validateSubscriptionUpdate)) body: Parameters<SubscriptionsService['update']>[1],
    @Actor() actor: string,
    @ConfinedTo() confined: string | null,
  ) {
    return this.subscriptions.update(id, body, actor, confined !== null);
  }

  @Delete(':id')
  @HttpCode(204)
  @UseGuards(AdminWriteGuard)
  delete(@Param('id', validatedParameters('deleteSubscription')) id: string, @Actor() actor: string) {
    return this.subscriptions.delete(id, actor);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @UseGuards(AdminWriteGuard)
  rotateSecret(@Param('id', validatedParameters('rotateSubscriptionSecret')) id: string, @Actor() actor: string) {
    return this.subscriptions.rotateSecret(id, actor);
  }

  /** A receiver that fails is still a 200 here: the answer says what it said. */
  @Post(':id/test')
  @HttpCode(200)
  @UseGuards(AdminWriteGuard)
  test(
    @Param('id', validatedParameters('testSubscription')) id: string,
    @Body(validatedBody(validateSubscriptionTest, { optional: true }))
    body: Parameters<SubscriptionsService['test']>[1],
    @Actor() actor: string,
  ) {
    return this.subscriptions.test(id, body, actor);
  }
}
