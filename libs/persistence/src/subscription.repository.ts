import { Pool } from 'pg';

export interface Subscription {
  id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  hasToken: boolean;
  createdAt: string;
  updatedAt: string;
}

interface SubscriptionRow {
  id: string;
  url: string;
  token: string | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SubscriptionPatch {
  url?: string;
  token?: string | null;
  enabled?: boolean;
  description?: string;
}

/** The public view: never the secret or the token. */
function toSubscription(r: SubscriptionRow): Subscription {
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    hasToken: r.token !== null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

export class SubscriptionRepository {
  constructor(private readonly pool: Pool) {}

  async create(s: { url: string; token: string | null; secret: string; description: string | null }): Promise<Subscription> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      'INSERT INTO subscriptions (url, token, secret, description) VALUES ($1, $2, $3, $4) RETURNING *',
      [s.url, s.token, s.secret, s.description],
    );
    return toSubscription(rows[0]);
  }

  async list(): Promise<Subscription[]> {
    const { rows } = await this.pool.query<SubscriptionRow>('SELECT * FROM subscriptions ORDER BY created_at, id');
    return rows.map(toSubscription);
  }

  async get(id: string): Promise<Subscription | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.pool.query<SubscriptionRow>('SELECT * FROM subscriptions WHERE id = $1', [id]);
    return rows[0] ? toSubscription(rows[0]) : null;
  }

  async update(id: string, patch: SubscriptionPatch): Promise<Subscription | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.pool.query<SubscriptionRow>(
      `UPDATE subscriptions SET
         url = COALESCE($2, url),
         token = CASE WHEN $3::boolean THEN $4 ELSE token END,
         enabled = COALESCE($5, enabled),
         disabled_reason = CASE WHEN COALESCE($5, enabled) THEN NULL ELSE COALESCE(disabled_reason, 'disabled by an admin') END,
         description = COALESCE($6, description),
         updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, patch.url ?? null, 'token' in patch, patch.token ?? null, patch.enabled ?? null, patch.description ?? null],
    );
    return rows[0] ? toSubscription(rows[0]) : null;
  }

  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return ((await this.pool.query('DELETE FROM subscriptions WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  /** The old secret keeps signing next to the new one until `overlapMs` from now. */
  async rotateSecret(id: string, newSecret: string, overlapMs: number): Promise<Subscription | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.pool.query<SubscriptionRow>(
      `UPDATE subscriptions SET previous_secret = secret, secret = $2,
         previous_secret_expires_at = now() + $3 * interval '1 millisecond', updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, newSecret, overlapMs],
    );
    return rows[0] ? toSubscription(rows[0]) : null;
  }

  async disable(id: string, reason: string): Promise<void> {
    await this.pool.query(
      'UPDATE subscriptions SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1',
      [id, reason],
    );
  }
}
