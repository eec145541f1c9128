import { Injectable } from '@nestjs/common';
import { BackfillCreateBody } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { ActiveBackfillError, AuditRepository, BackfillRepository, SubscriptionRepository } from '@app/persistence';
import { subscriptionNotFound } from '../subscriptions/subscriptions.service';
import { BackfillDto, mapBackfill } from './backfill.dto';

const DEFAULT_RATE = 50;

/**
 * Backfills of one subscription: asked for and cancelled here, run by the worker (its BackfillRunner). Every route
 * is scoped to its subscription (`/subscriptions/{id}/backfills`), so a credential limited to one subscription can
 * be given them as they are.
 */
@Injectable()
export class BackfillsService {
  constructor(
    private readonly backfills: BackfillRepository,
    private readonly subscriptions: SubscriptionRepository,
    private readonly audit: AuditRepository,
  ) {}

  async create(subscriptionId: string, body: BackfillCreateBody, actor: string): Promise<BackfillDto> {
    const rate = body.ratePerSecond ?? DEFAULT_RATE;
    const subscription = await this.subscriptions.findById(subscriptionId);
    if (!subscription) throw subscriptionNotFound(subscriptionId);
    if (subscription.kind !== 'plants')
      throw ProblemException.of(
        'conflict',
        `Subscription ${subscriptionId} receives Plant Store's own events, not plants: there is nothing to backfill`,
      );
    let row;
    try {
      row = await this.backfills.create(subscriptionId, body.since ? new Date(body.since) : null, rate, actor);
    } catch (err) {
      if (!(err instanceof ActiveBackfillError)) throw err;
      throw ProblemException.of(
        'conflict',
        `A backfill of subscription ${subscriptionId} is running: wait for it to finish, or cancel it ` +
          `(GET /subscriptions/${subscriptionId}/backfills lists it)`,
      );
    }
    if (!row) throw subscriptionNotFound(subscriptionId);
    await this.audit.record({
      actor,
      action: 'backfill.requested',
      subscription_id: subscriptionId,
      details: { backfillId: row.id, since: body.since ?? null, ratePerSecond: rate, total: row.total },
    });
    return mapBackfill(row);
  }

  /** A deleted subscription's backfills stay readable while it is kept; one that never was is a 404. */
  async list(subscriptionId: string): Promise<BackfillDto[]> {
    const rows = await this.backfills.list(subscriptionId);
    if (rows.length === 0 && !(await this.subscriptions.findById(subscriptionId)))
      throw subscriptionNotFound(subscriptionId);
    return rows.map(mapBackfill);
  }

  async get(subscriptionId: string, id: string): Promise<BackfillDto> {
    const row = await this.backfills.findById(id, subscriptionId);
    if (!row) throw backfillNotFound(subscriptionId, id);
    return mapBackfill(row);
  }

  async cancel(subscriptionId: string, id: string, actor: string): Promise<BackfillDto> {
    const row = await this.backfills.cancel(id, subscriptionId);
    if (!row) {
      const existing = await this.backfills.findById(id, subscriptionId);
      if (!existing) throw backfillNotFound(subscriptionId, id);
      throw ProblemException.of('conflict', `Backfill ${id} is ${existing.state}: only a running one can be cancelled`);
    }
    await this.audit.record({
      actor,
      action: 'backfill.cancelled',
      subscription_id: subscriptionId,
      details: { backfillId: id, queued: row.queued },
    });
    return mapBackfill(row);
  }
}

const backfillNotFound = (subscriptionId: string, id: string) =>
  ProblemException.of('notFound', `No backfill ${id} of subscription ${subscriptionId}`);
