import { Injectable } from '@nestjs/common';
import { ProblemException } from '@app/observability';
import { AuditRepository, DeliveryFilter, DeliveryRepository, SubscriptionRepository } from '@app/persistence';
import { assertOwnSubscription } from '../auth/portal-scope';
import { Page, toPage } from '../http/pagination';
import { subscriptionNotFound } from '../subscriptions/subscriptions.service';
import { DeliveryDto, DeliveryWithAttemptsDto, mapDelivery, mapDeliveryWithAttempts } from './delivery.dto';

/** What was sent and each attempt, and replay: one failed delivery, or every failure of a subscriber since a time. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly subscriptions: SubscriptionRepository,
    private readonly audit: AuditRepository,
  ) {}

  async list(filter: DeliveryFilter, limit: number, beforeSeq: number | null): Promise<Page<DeliveryDto>> {
    return toPage(await this.deliveries.listNewest(filter, limit + 1, beforeSeq), limit, mapDelivery);
  }

  /** `confined`: the one subscription a portal link may see (null: any). */
  async get(id: string, confined: string | null = null): Promise<DeliveryWithAttemptsDto> {
    const row = await this.deliveries.findById(id);
    if (!row) throw deliveryNotFound(id);
    assertOwnSubscription(confined, row.subscription_id, `delivery ${id}`);
    return mapDeliveryWithAttempts(row);
  }

  /** Only a failed delivery is sent again: a pending one is already going, a succeeded one arrived. */
  async retry(id: string, actor: string, confined: string | null = null): Promise<DeliveryDto> {
    if (confined !== null) await this.get(id, confined); // another subscriber's: 403 before anything changes
    const queued = await this.deliveries.retryFailed(id);
    if (queued) {
      await this.audit.record({
        actor,
        action: 'delivery.retried',
        subscription_id: queued.subscription_id,
        delivery_id: id,
      });
      return mapDelivery(queued);
    }
    const current = await this.deliveries.findById(id);
    if (!current) throw deliveryNotFound(id);
    if (current.status === 'failed')
      throw ProblemException.of('conflict', 'Its subscription was deleted: there is nowhere to send it again');
    throw ProblemException.of('conflict', `Only a failed delivery can be retried; this one is ${current.status}`);
  }

  /** Every failed delivery that matches, back to pending; one audit event for the lot (it may be thousands). */
  async retryMatching(filter: Omit<DeliveryFilter, 'status'>, actor: string): Promise<{ requeued: number }> {
    const requeued = await this.deliveries.retryFailedMatching(filter);
    await this.audit.record({
      actor,
      action: 'deliveries.retried',
      subscription_id: filter.subscriptionId ?? null,
      details: {
        requeued: requeued.length,
        filter: {
          ...filter,
          since: filter.since?.toISOString(),
          until: filter.until?.toISOString(),
        },
      },
    });
    return { requeued: requeued.length };
  }

  async recover(subscriptionId: string, since: Date, actor: string): Promise<{ requeued: number }> {
    if (!(await this.subscriptions.findById(subscriptionId))) throw subscriptionNotFound(subscriptionId);
    const requeued = await this.deliveries.retryFailedSince(subscriptionId, since);
    await this.audit.record({
      actor,
      action: 'subscription.recovered',
      subscription_id: subscriptionId,
      details: { since: since.toISOString(), requeued },
    });
    return { requeued };
  }
}

const deliveryNotFound = (id: string) => ProblemException.of('notFound', `No delivery ${id}`);
