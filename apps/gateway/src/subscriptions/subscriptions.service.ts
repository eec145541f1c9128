import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { SubscriptionCreateBody, SubscriptionUpdateBody } from '@app/contracts';
import { checkSubscriberUrl, generateSecret, isValidSecret } from '@app/delivery';
import { ProblemException } from '@app/observability';
import { Subscription, SubscriptionRepository } from '@app/persistence';

/** How long a rotated-out secret keeps signing next to the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly subscriptions: SubscriptionRepository,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async create(body: SubscriptionCreateBody): Promise<Subscription & { secret: string }> {
    await this.assertUrlAllowed(body.url);
    if (body.secret !== undefined && !isValidSecret(body.secret)) {
      throw invalid('secret', 'must be whsec_ followed by 24 to 64 base64-encoded bytes');
    }
    const secret = body.secret ?? generateSecret();
    const created = await this.subscriptions.create({
      url: body.url,
      token: body.token ?? null,
      secret,
      description: body.description ?? null,
    });
    return { ...created, secret };
  }

  list(): Promise<Subscription[]> {
    return this.subscriptions.list();
  }

  async get(id: string): Promise<Subscription> {
    return found(await this.subscriptions.get(id), id);
  }

  async update(id: string, body: SubscriptionUpdateBody): Promise<Subscription> {
    if (body.url !== undefined) await this.assertUrlAllowed(body.url);
    return found(await this.subscriptions.update(id, body), id);
  }

  async delete(id: string): Promise<void> {
    if (!(await this.subscriptions.delete(id))) throw notFound(id);
  }

  async rotateSecret(id: string): Promise<Subscription & { secret: string }> {
    const secret = generateSecret();
    return { ...found(await this.subscriptions.rotateSecret(id, secret, SECRET_OVERLAP_MS), id), secret };
  }

  private async assertUrlAllowed(url: string) {
    const check = await checkSubscriberUrl(url, this.config.DELIVERY_ALLOW_PRIVATE_NETWORKS);
    if (!check.ok) throw invalid('url', check.reason);
  }
}

const notFound = (id: string) => ProblemException.of('notFound', `No subscription ${id}`);
function found<T>(value: T | null, id: string): T {
  if (value === null) throw notFound(id);
  return value;
}
const invalid = (field: string, message: string) =>
  ProblemException.of('validation', `${field} ${message}`, { errors: [{ field, message }] });
