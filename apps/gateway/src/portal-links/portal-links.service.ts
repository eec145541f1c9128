import { Injectable } from '@nestjs/common';
import { PORTAL_LINK_LIFETIME, PortalLinkCreateBody } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { AuditRepository, PortalLinkRepository, SubscriptionRepository } from '@app/persistence';
import { Principal } from '../auth/bearer.strategies';
import { subscriptionNotFound } from '../subscriptions/subscriptions.service';
import { mapPortalLink, PortalLinkDto, PortalLinkWithTokenDto, PortalSessionDto, portalUrl } from './portal-link.dto';

/**
 * 409: an operational subscription receives Plant Store's own events (dead letters, exhausted deliveries of every
 * subscriber), which are the operator's to see and manage: a portal link is for a subscriber of New Plant webhooks.
 */
const operationalHasNoPortal = (id: string) =>
  ProblemException.of(
    'conflict',
    `Subscription ${id} is operational: it receives Plant Store's own events, which are the operator's, so it has ` +
      'no portal link. Manage it with an admin token (ADMIN_TOKENS); portal links are for New Plant subscriptions.',
  );

/** Portal links: made, listed and revoked by an admin; the subscriber's page asks which subscription it opens. */
@Injectable()
export class PortalLinksService {
  constructor(
    private readonly links: PortalLinkRepository,
    private readonly subscriptions: SubscriptionRepository,
    private readonly audit: AuditRepository,
  ) {}

  async create(
    subscriptionId: string,
    body: PortalLinkCreateBody,
    origin: string,
    actor: string,
  ): Promise<PortalLinkWithTokenDto> {
    const subscription = await this.subscriptions.findById(subscriptionId);
    if (!subscription) throw subscriptionNotFound(subscriptionId);
    if (subscription.kind === 'operational') throw operationalHasNoPortal(subscriptionId);
    const lifetimeSeconds = body.lifetimeSeconds ?? PORTAL_LINK_LIFETIME.default;
    const created = await this.links.create({
      subscriptionId,
      description: body.description ?? null,
      createdBy: actor,
      lifetimeSeconds,
    });
    if (!created) throw subscriptionNotFound(subscriptionId);
    await this.audit.record({
      actor,
      action: 'portal_link.created',
      subscription_id: subscriptionId,
      details: { linkId: created.row.id, expiresAt: created.row.expires_at.toISOString(), lifetimeSeconds },
    });
    return { ...mapPortalLink(created.row), token: created.token, url: portalUrl(origin, created.token) };
  }

  async list(subscriptionId: string): Promise<PortalLinkDto[]> {
    if (!(await this.subscriptions.findById(subscriptionId))) throw subscriptionNotFound(subscriptionId);
    const now = new Date();
    return (await this.links.list(subscriptionId)).map((r) => mapPortalLink(r, now));
  }

  async revoke(subscriptionId: string, linkId: string, actor: string): Promise<PortalLinkDto> {
    const row = await this.links.revoke(subscriptionId, linkId, actor);
    if (!row) throw ProblemException.of('notFound', `Subscription ${subscriptionId} has no portal link ${linkId}`);
    await this.audit.record({
      actor,
      action: 'portal_link.revoked',
      subscription_id: subscriptionId,
      details: { linkId },
    });
    return mapPortalLink(row);
  }

  session(principal: Principal): PortalSessionDto {
    const { subscriptionId, linkId, expiresAt } = principal.portal!;
    return { subscriptionId, linkId, expiresAt: expiresAt.toISOString() };
  }
}
