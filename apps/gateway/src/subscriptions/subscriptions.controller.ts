import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { validateSubscriptionCreate, validateSubscriptionUpdate } from '@app/contracts';
import { AdminAuthGuard } from '../auth/bearer.guards';
import { validatedBody } from '../http/validated-body.pipe';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { SubscriptionsService } from './subscriptions.service';

/** Admin API: who receives the New Plant webhook. Documented in /openapi.json (the `adminAuth` scheme). */
@ApiExcludeController()
@UseGuards(AdminAuthGuard)
@Controller('subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post()
  create(@Body(validatedBody(validateSubscriptionCreate)) body: Parameters<SubscriptionsService['create']>[0]) {
    return this.subscriptions.create(body);
  }

  @Get()
  list() {
    return this.subscriptions.list();
  }

  @Get(':id')
  get(@Param('id', validatedParameters('getSubscription')) id: string) {
    return this.subscriptions.get(id);
  }

  @Patch(':id')
  update(
    @Param('id', validatedParameters('updateSubscription')) id: string,
    @Body(validatedBody(validateSubscriptionUpdate)) body: Parameters<SubscriptionsService['update']>[1],
  ) {
    return this.subscriptions.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  delete(@Param('id', validatedParameters('deleteSubscription')) id: string) {
    return this.subscriptions.delete(id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  rotateSecret(@Param('id', validatedParameters('rotateSubscriptionSecret')) id: string) {
    return this.subscriptions.rotateSecret(id);
  }
}
