import { Injectable } from '@nestjs/common';
import { ProblemException } from '@app/observability';
import { DeliveryFilter, DeliveryRepository, SubscriptionRepository } from '@app/persistence';
import { Page, toPage } from '../http/pagination';
import { subscriptionNotFound } from '../subscriptions/subscriptions.service';
import { DeliveryDto, DeliveryWithAttemptsDto, mapDelivery, mapDeliveryWithAttempts } from './delivery.dto';

/** What was sent and each attempt, and replay: one failed delivery, or every failure of a subscriber since a time. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly subscriptions: SubscriptionRepository,
  ) {}

  async list(filter: DeliveryFilter, limit: number, beforeSeq: number | null): Promise<Page<DeliveryDto>> {
    return toPage(await this.deliveries.listNewest(filter, limit + 1, beforeSeq), limit, mapDelivery);
  }

  async get(id: string): Promise<DeliveryWithAttemptsDto> {
    const row = await this.deliveries.findById(id);
    if (!row) throw deliveryNotFound(id);
    return mapDeliveryWithAttempts(row);
  }

  /** Only a failed delivery is sent again: a pending one is already going, a succeeded one arrived. */
  async retry(id: string): Promise<DeliveryDto> {
    const queued = await this.deliveries.retryFailed(id);
    if (queued) return mapDelivery(queued);
    const current = await this.deliveries.findById(id);
    if (!current) throw deliveryNotFound(id);
    throw ProblemException.of('conflict', `Only a failed delivery can be retried; this one is ${current.status}`);
  }

  async recover(subscriptionId: string, since: Date): Promise<{ requeued: number }> {
    if (!(await this.subscriptions.findById(subscriptionId))) throw subscriptionNotFound(subscriptionId);
    return { requeued: await this.deliveries.retryFailedSince(subscriptionId, since) };
  }
}

const deliveryNotFound = (id: string) => ProblemException.of('notFound', `No delivery ${id}`);
