import { SubscriptionRow } from '@app/persistence';

/** A subscription as the admin API returns it (Subscription in /openapi.json): never the secret or the token. */
export interface SubscriptionDto {
  id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  hasToken: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Only when it is created or rotated: the signing secret, shown once. */
export type SubscriptionWithSecretDto = SubscriptionDto & { secret: string };

export const mapSubscription = (r: SubscriptionRow): SubscriptionDto => ({
  id: r.id,
  url: r.url,
  description: r.description,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  hasToken: r.token !== null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export const mapSubscriptionWithSecret = (r: SubscriptionRow): SubscriptionWithSecretDto => ({
  ...mapSubscription(r),
  secret: r.secret,
});
