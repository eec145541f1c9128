import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { ProblemException } from '@app/observability';
import { AuditRepository, DeliveryFilter, DeliveryRepository, SubscriptionRepository } from '@app/persistence';
import { PORTAL_LINK_ACTOR } from '../auth/bearer.strategies';
import { assertOwnSubscription } from '../auth/portal-scope';
import { encodeCursor } from '../http/cursor';
import { Page, toPage } from '../http/pagination';
import { subscriptionNotFound } from '../subscriptions/subscriptions.service';
import { DeliveryDto, DeliveryWithAttemptsDto, mapDelivery, mapDeliveryWithAttempts } from './delivery.dto';
import { retryAfterSeconds } from '../http/retry-after';

/** What was sent and each attempt, and replay: one failed delivery, or every failure of a subscriber since a time. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly subscriptions: SubscriptionRepository,
    private readonly audit: AuditRepository,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
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

  /**
   * Replay since a time: the failed deliveries (`failed`), or every New Plant delivery whose event is at or after
   * it (`all`, in bounded batches from `afterSeq`, see REPLAY_SINCE). One audit event per call, with its counts.
   */
  async recover(
    subscriptionId: string,
    since: Date,
    status: RecoverStatus,
    afterSeq: number | null,
    actor: string,
    confined: string | null = null,
  ): Promise<Recovery> {
    if (!(await this.subscriptions.findById(subscriptionId))) throw subscriptionNotFound(subscriptionId);
    if (confined !== null) {
      assertOwnSubscription(confined, subscriptionId, `subscription ${subscriptionId}`);
      await this.withinPortalLinkShares(subscriptionId);
    }
    const holder = randomUUID();
    await this.holdReplay(subscriptionId, holder);
    try {
      return await this.replay(subscriptionId, since, status, afterSeq, actor);
    } finally {
      await this.deliveries.releaseReplay(subscriptionId, holder).catch(() => undefined); // else it runs out
    }
  }

  /**
   * A subscription's portal links together start at most PORTAL_LINK_REPLAYS_PER_DAY replays in 24 hours (issue
   * #36: twelve in a row sent one delivery thirteen times and each failing one paged every operator; a call that
   * continues a replay with its cursor is a replay too, each re-queues up to 5,000), and one per
   * PORTAL_LINK_REPLAY_INTERVAL: a link spending its daily budget in one burst made the other subscribers' p95 12
   * times worse (npm run bench:noisy-neighbour -- --abuse replay; then a call read up to 50,000 deliveries of every
   * subscriber, now its own alone, migration 32), and its re-sends are load too. The operator's replays are not
   * counted.
   */
  private async withinPortalLinkShares(subscriptionId: string): Promise<void> {
    const budget = this.config.PORTAL_LINK_REPLAYS_PER_DAY;
    await this.withinPortalWindow(subscriptionId, budget, DAY_S, (count) => ({
      reason: 'portal-link-replay-budget',
      detail:
        `This subscription's portal links started ${count} replays in the last 24 hours, the most they may ` +
        `(PORTAL_LINK_REPLAYS_PER_DAY, ${budget}). Nothing was re-queued: retry after Retry-After seconds, or ` +
        'ask the operator, whose replays are not counted',
    }));
    const intervalS = this.config.PORTAL_LINK_REPLAY_INTERVAL / 1000;
    await this.withinPortalWindow(subscriptionId, 1, intervalS, () => ({
      reason: 'portal-link-replay-rate',
      detail:
        `This subscription's portal links started a replay less than ${intervalS} s ago; they may start one per ` +
        'PORTAL_LINK_REPLAY_INTERVAL. Nothing was re-queued: retry after Retry-After seconds',
    }));
  }

  private async replay(
    subscriptionId: string,
    since: Date,
    status: RecoverStatus,
    afterSeq: number | null,
    actor: string,
  ): Promise<Recovery> {
    let result: Recovery;
    let moved = 0;
    if (status === 'failed') {
      result = {
        requeued: await this.deliveries.retryFailedSince(subscriptionId, since),
        status,
        complete: true,
        cursor: null,
      };
    } else {
      let requeued = 0;
      let lookedAt = 0;
      let cursor = afterSeq ?? 0;
      let exhausted = false;
      // Bounded per call (REPLAY_BOUNDS): a statement each batch, each short; the caller goes on with the cursor.
      for (let i = 0; i < REPLAY_BOUNDS.batches && !exhausted; i++) {
        const b = await this.deliveries.replaySince(subscriptionId, since, cursor, {
          limit: REPLAY_BOUNDS.limit,
          scan: REPLAY_BOUNDS.scan,
          // The wait before a replayed delivery is due: no ingest statement outlives DATABASE_STATEMENT_TIMEOUT_MS
          // (the worker's; deploy both apps with the same, as the shared environment does).
          settleMs: this.config.DATABASE_STATEMENT_TIMEOUT_MS,
        });
        requeued += b.requeued;
        moved += b.moved;
        lookedAt += b.lookedAt;
        cursor = b.cursor;
        exhausted = b.exhausted;
      }
      result = { requeued, status, complete: exhausted, cursor: exhausted ? null : encodeCursor(cursor), lookedAt };
    }
    await this.audit.record({
      actor,
      action: RECOVERED,
      subscription_id: subscriptionId,
      details: {
        since: since.toISOString(),
        status,
        requeued: result.requeued,
        ...(status === 'all' ? { fromLog: moved, complete: result.complete, lookedAt: result.lookedAt } : {}),
      },
    });
    return result;
  }
  /**
   * One replay at a time per subscription, whoever asks and on whichever gateway (issue #36: a dozen at once each
   * scanned 50,000 deliveries). The hold lasts the call, and at most as long as its statements may (each bounded
   * by DATABASE_QUERY_TIMEOUT_MS), so a gateway that dies mid-call frees it. Past it: 409 with Retry-After.
   */
  private async holdReplay(subscriptionId: string, holder: string): Promise<void> {
    const forMs = (REPLAY_BOUNDS.batches + 3) * this.config.DATABASE_QUERY_TIMEOUT_MS;
    const held = await this.deliveries.holdReplay(subscriptionId, holder, forMs);
    if (held === true) return;
    const retryAfter = retryAfterSeconds(held.getTime() - Date.now(), 5);
    throw ProblemException.of(
      'conflict',
      'Another replay of this subscription is running; one runs at a time. Nothing was re-queued: retry after ' +
        'Retry-After seconds (with the cursor the running one returns, if it is yours)',
      { reason: 'replay-in-progress', retryAfterSeconds: retryAfter } as never,
      { 'retry-after': String(retryAfter) },
    );
  }

  /**
   * Replays a subscription's portal links started within the last `windowS` seconds (counted from the audit log,
   * so every gateway replica sees the same): fewer than `allowed`, or a 429 with the seconds until the oldest
   * leaves the window (`refusal` says which share and what to do).
   */
  private async withinPortalWindow(
    subscriptionId: string,
    allowed: number,
    windowS: number,
    refusal: (count: number) => { detail: string; reason: string },
  ): Promise<void> {
    if (windowS <= 0) return;
    const { count, oldest } = await this.audit.countRecent(subscriptionId, RECOVERED, PORTAL_LINK_ACTOR, windowS);
    if (count < allowed) return;
    const retryAfter = retryAfterSeconds((oldest?.getTime() ?? Date.now()) + windowS * 1000 - Date.now());
    const { detail, reason } = refusal(count);
    throw ProblemException.of('tooManyRequests', detail, { reason, retryAfterSeconds: retryAfter } as never, {
      'retry-after': String(retryAfter),
    });
  }
}

const RECOVERED = 'subscription.recovered';
const DAY_S = 86_400;

export type RecoverStatus = 'failed' | 'all';

export interface Recovery {
  requeued: number;
  status: RecoverStatus;
  complete: boolean;
  cursor: string | null;
  lookedAt?: number;
}

/**
 * What one call of recover with status=all may do: batches of at most `limit` re-queued among `scan` deliveries
 * looked at, `batches` of them: 5,000 re-queued and 50,000 looked at per call at most (the OpenAPI document says so).
 */
export const REPLAY_BOUNDS = { limit: 500, scan: 5000, batches: 10 };

const deliveryNotFound = (id: string) => ProblemException.of('notFound', `No delivery ${id}`);
