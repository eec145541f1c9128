import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { SubscriptionCreateBody, SubscriptionUpdateBody } from '@app/contracts';
import { checkSubscriberUrl, generateSecret, isValidSecret } from '@app/delivery';
import { invalidField, ProblemException } from '@app/observability';
import { SubscriptionRepository, SubscriptionRow } from '@app/persistence';
import {
  mapSubscription,
  mapSubscriptionWithSecret,
  SubscriptionDto,
  SubscriptionWithSecretDto,
} from './subscription.dto';

/** How long a rotated-out secret keeps signing next to the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly subscriptions: SubscriptionRepository,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async create(body: SubscriptionCreateBody): Promise<SubscriptionWithSecretDto> {
    await this.assertUrlAllowed(body.url);
    if (body.secret !== undefined && !isValidSecret(body.secret)) {
      throw invalidField('secret', 'must be whsec_ followed by 24 to 64 base64-encoded bytes');
    }
    const created = await this.subscriptions.create({
      url: body.url,
      token: body.token ?? null,
      secret: body.secret ?? generateSecret(),
      description: body.description ?? null,
    });
    return mapSubscriptionWithSecret(created);
  }

  async list(): Promise<SubscriptionDto[]> {
    return (await this.subscriptions.list()).map(mapSubscription);
  }

  async get(id: string): Promise<SubscriptionDto> {
    return mapSubscription(found(await this.subscriptions.findById(id), id));
  }

  async update(id: string, body: SubscriptionUpdateBody): Promise<SubscriptionDto> {
    if (body.url !== undefined) await this.assertUrlAllowed(body.url);
    return mapSubscription(found(await this.subscriptions.update(id, body), id));
  }

  async delete(id: string): Promise<void> {
    if (!(await this.subscriptions.delete(id))) throw subscriptionNotFound(id);
  }

  async rotateSecret(id: string): Promise<SubscriptionWithSecretDto> {
    return mapSubscriptionWithSecret(
      found(await this.subscriptions.rotateSecret(id, generateSecret(), SECRET_OVERLAP_MS), id),
    );
  }

  private async assertUrlAllowed(url: string) {
    const check = await checkSubscriberUrl(url, this.config.DELIVERY_ALLOW_PRIVATE_NETWORKS);
    if (!check.ok) throw invalidField('url', check.reason);
  }
}

export const subscriptionNotFound = (id: string) => ProblemException.of('notFound', `No subscription ${id}`);

function found(row: SubscriptionRow | null, id: string): SubscriptionRow {
  if (row === null) throw subscriptionNotFound(id);
  return row;
}
