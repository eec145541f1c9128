import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { parameterValidator } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { DeliveryRepository, DeliveryStatus, isUuid, SubscriptionRepository } from '@app/persistence';
import { AdminAuthGuard } from '../auth/bearer.guards';
import { parseCursor, parseLimit } from '../http/pagination';

const STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
const checkSince = parameterValidator('recoverSubscription', 'since');
const invalid = (field: string, message: string) =>
  ProblemException.of('validation', `${field} ${message}`, { errors: [{ field, message }] });

/** Admin API: what was sent, each attempt, and replay (one delivery, or every failure since a time). */
@ApiExcludeController()
@UseGuards(AdminAuthGuard)
@Controller()
export class DeliveriesController {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly subscriptions: SubscriptionRepository,
  ) {}

  @Get('deliveries')
  list(
    @Query('subscriptionId') subscriptionId?: string,
    @Query('status') status?: string,
    @Query('plantId') plantId?: string,
    @Query('limit') limit?: string,
    @Query('cursor') cursor?: string,
  ) {
    if (subscriptionId !== undefined && !isUuid(subscriptionId)) throw invalid('subscriptionId', 'must be a UUID');
    if (status !== undefined && !STATUSES.includes(status as DeliveryStatus)) throw invalid('status', `must be one of ${STATUSES.join(', ')}`);
    if (plantId !== undefined && !/^\d{1,16}$/.test(plantId)) throw invalid('plantId', 'must be a positive integer');
    return this.deliveries.list(
      { subscriptionId, status: status as DeliveryStatus | undefined, plantId: plantId === undefined ? undefined : Number(plantId) },
      parseLimit(limit),
      parseCursor(cursor),
    );
  }

  @Get('deliveries/:id')
  async get(@Param('id') id: string) {
    const delivery = await this.deliveries.get(id);
    if (!delivery) throw ProblemException.of('notFound', `No delivery ${id}`);
    return delivery;
  }

  @Post('deliveries/:id/retry')
  @HttpCode(202)
  async retry(@Param('id') id: string) {
    const queued = await this.deliveries.retryNow(id);
    if (queued) return queued;
    if (!(await this.deliveries.get(id))) throw ProblemException.of('notFound', `No delivery ${id}`);
    throw ProblemException.of('conflict', 'Only a failed delivery can be retried; this one is pending or succeeded');
  }

  @Post('subscriptions/:id/recover')
  @HttpCode(202)
  async recover(@Param('id') id: string, @Query('since') since?: string) {
    const errors = since === undefined ? [{ field: 'since', message: 'is required' }] : checkSince(since);
    if (errors.length > 0) throw invalid('since', `${errors[0].message}: an RFC 3339 date-time such as 2026-01-01T00:00:00Z`);
    const at = Date.parse(since!);
    if (!(await this.subscriptions.get(id))) throw ProblemException.of('notFound', `No subscription ${id}`);
    return { requeued: await this.deliveries.recover(id, new Date(at)) };
  }
}
