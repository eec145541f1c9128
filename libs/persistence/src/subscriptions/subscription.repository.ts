import { Pool } from 'pg';

/** A row of `subscriptions`, secrets included: the gateway's mapping decides what leaves the process. */
export interface SubscriptionRow {
  id: string;
  url: string;
  token: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewSubscription {
  url: string;
  token: string | null;
  secret: string;
  description: string | null;
}

/** A partial change; `token: null` removes the token, an absent key leaves the column as it is. */
export interface SubscriptionChange {
  url?: string;
  token?: string | null;
  enabled?: boolean;
  description?: string;
}

/** Disabling keeps (or sets) a reason; enabling clears it. */
const DISABLED_BY_ADMIN = 'disabled by an admin';

export class SubscriptionRepository {
  constructor(private readonly pool: Pool) {}

  async create(s: NewSubscription): Promise<SubscriptionRow> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      'INSERT INTO subscriptions (url, token, secret, description) VALUES ($1, $2, $3, $4) RETURNING *',
      [s.url, s.token, s.secret, s.description],
    );
    return rows[0];
  }

  async list(): Promise<SubscriptionRow[]> {
    const { rows } = await this.pool.query<SubscriptionRow>('SELECT * FROM subscriptions ORDER BY created_at, id');
    return rows;
  }

  async findById(id: string): Promise<SubscriptionRow | null> {
    const { rows } = await this.pool.query<SubscriptionRow>('SELECT * FROM subscriptions WHERE id = $1', [id]);
    return rows[0] ?? null;
  }

  async update(id: string, change: SubscriptionChange): Promise<SubscriptionRow | null> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      `UPDATE subscriptions SET
         url = COALESCE($2, url),
         token = CASE WHEN $3::boolean THEN $4 ELSE token END,
         enabled = COALESCE($5, enabled),
         disabled_reason = CASE WHEN COALESCE($5, enabled) THEN NULL ELSE COALESCE(disabled_reason, $7) END,
         description = COALESCE($6, description),
         updated_at = now()
       WHERE id = $1 RETURNING *`,
      [
        id,
        change.url ?? null,
        'token' in change,
        change.token ?? null,
        change.enabled ?? null,
        change.description ?? null,
        DISABLED_BY_ADMIN,
      ],
    );
    return rows[0] ?? null;
  }

  async delete(id: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM subscriptions WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  /** The old secret keeps signing next to the new one until `overlapMs` from now. */
  async rotateSecret(id: string, newSecret: string, overlapMs: number): Promise<SubscriptionRow | null> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      `UPDATE subscriptions SET previous_secret = secret, secret = $2,
         previous_secret_expires_at = now() + $3 * interval '1 millisecond', updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, newSecret, overlapMs],
    );
    return rows[0] ?? null;
  }
}
