import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DeliveryRetryFilterBody, validateDeliveryRetryFilter } from '@app/contracts';
import { DeliveryStatus } from '@app/delivery';
import { Actor, AdminReadGuard, AdminWriteGuard, ConfinedTo } from '../auth/bearer.guards';
import { assertOwnSubscription } from '../auth/portal-scope';
import { optionalDate } from '../http/dates';
import { parseCursor } from '../http/pagination';
import { validatedBody } from '../http/validated-body.pipe';
import { validatedParameters } from '../http/validated-parameter.pipe';
import { DeliveriesService, RecoverStatus } from './deliveries.service';

/** Admin API: what was sent, each attempt, and replay (one delivery, the failures in a filter, or since a time). */
@ApiExcludeController()
@UseGuards(AdminReadGuard)
@Controller()
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('deliveries')
  list(
    @Query('subscriptionId', validatedParameters('listDeliveries')) subscriptionId: string | undefined,
    @Query('status', validatedParameters('listDeliveries')) status: DeliveryStatus | undefined,
    @Query('plantId', validatedParameters('listDeliveries')) plantId: number | undefined,
    @Query('since', validatedParameters('listDeliveries')) since: string | undefined,
    @Query('until', validatedParameters('listDeliveries')) until: string | undefined,
    @Query('limit', validatedParameters('listDeliveries')) limit: number,
    @Query('cursor', validatedParameters('listDeliveries')) cursor: string | undefined,
    @ConfinedTo() confined: string | null,
  ) {
    // A portal link lists its own subscription's (its guard refused any other subscriptionId).
    return this.deliveries.list(
      {
        subscriptionId: confined ?? subscriptionId,
        status,
        plantId,
        since: optionalDate(since),
        until: optionalDate(until),
      },
      limit,
      parseCursor(cursor),
    );
  }

  // Before deliveries/:id/retry: a literal path, one failed delivery or many.
  @Post('deliveries/retry')
  @HttpCode(202)
  @UseGuards(AdminWriteGuard)
  retryMatching(
    @Body(validatedBody(validateDeliveryRetryFilter)) body: DeliveryRetryFilterBody,
    @Actor() actor: string,
    @ConfinedTo() confined: string | null,
  ) {
    assertOwnSubscription(confined, body.subscriptionId ?? confined, `subscription ${body.subscriptionId}`);
    return this.deliveries.retryMatching(
      {
        ...body,
        subscriptionId: confined ?? body.subscriptionId,
        since: optionalDate(body.since),
        until: optionalDate(body.until),
      },
      actor,
    );
  }

  @Get('deliveries/:id')
  get(@Param('id', validatedParameters('getDelivery')) id: string, @ConfinedTo() confined: string | null) {
    return this.deliveries.get(id, confined);
  }

  @Post('deliveries/:id/retry')
  @HttpCode(202)
  @UseGuards(AdminWriteGuard)
  retry(
    @Param('id', validatedParameters('retryDelivery')) id: string,
    @Actor() actor: string,
    @ConfinedTo() confined: string | null,
  ) {
    return this.deliveries.retry(id, actor, confined);
  }

  @Post('subscriptions/:id/recover')
  @HttpCode(202)
  @UseGuards(AdminWriteGuard)
  recover(
    @Param('id', validatedParameters('recoverSubscription')) id: string,
    @Query('since', validatedParameters('recoverSubscription')) since: string,
    @Query('status', validatedParameters('recoverSubscription')) status: RecoverStatus,
    @Query('cursor', validatedParameters('recoverSubscription')) cursor: string | undefined,
    @Actor() actor: string,
    @ConfinedTo() confined: string | null,
  ) {
    // A portal link reaches only its own subscription's (its guard refused another path id with 403), within the
    // daily replay budget its subscription's links share.
    return this.deliveries.recover(id, optionalDate(since)!, status, parseCursor(cursor), actor, confined);
  }
}
