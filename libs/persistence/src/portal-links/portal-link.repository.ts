import { createHash, randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { sqlFile } from '../sql/sql-file';

export const PORTAL_LINKS_SQL = sqlFile(__dirname, 'portal-links.sql');
const CREATE_PORTAL_LINK = PORTAL_LINKS_SQL.statement('create-portal-link');
const LIST_PORTAL_LINKS = PORTAL_LINKS_SQL.statement('list-portal-links');
const REVOKE_PORTAL_LINK = PORTAL_LINKS_SQL.statement('revoke-portal-link');
const FIND_PORTAL_LINK_BY_DIGEST = PORTAL_LINKS_SQL.statement('find-portal-link-by-digest');

/** A row of `portal_links`: a subscriber's credential for its own subscription. The token itself is never stored. */
export interface PortalLinkRow {
  id: string;
  subscription_id: string;
  description: string | null;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  revoked_by: string | null;
  last_used_at: Date | null;
}

/** A link found by its token, with what decides whether it still opens anything. */
export interface PresentedPortalLink extends PortalLinkRow {
  subscription_deleted: boolean;
  /** No portal link opens an operational subscription; one made before that rule is refused. */
  subscription_operational: boolean;
  checked_at: Date;
}

/** Every portal link token starts so: the gateway looks a bearer token up only when it does. */
export const PORTAL_TOKEN_PREFIX = 'psp_';

/** 32 random bytes: nothing to guess, so a plain SHA-256 is a safe digest to keep (no salt or stretching needed). */
export const newPortalToken = () => `${PORTAL_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
export const portalTokenDigest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export interface NewPortalLink {
  subscriptionId: string;
  description: string | null;
  createdBy: string;
  lifetimeSeconds: number;
}

export class PortalLinkRepository {
  constructor(private readonly pool: Pool) {}

  /** The row and the token, in the clear this once; null when the subscription does not exist. */
  async create(l: NewPortalLink): Promise<{ row: PortalLinkRow; token: string } | null> {
    const token = newPortalToken();
    const { rows } = await this.pool.query<PortalLinkRow & { token_digest?: Buffer }>(
      CREATE_PORTAL_LINK.text,
      CREATE_PORTAL_LINK.values({
        subscription: l.subscriptionId,
        tokenDigest: portalTokenDigest(token),
        description: l.description,
        createdBy: l.createdBy,
        lifetimeSeconds: l.lifetimeSeconds,
      }),
    );
    return rows[0] ? { row: withoutDigest(rows[0]), token } : null;
  }

  async list(subscriptionId: string): Promise<PortalLinkRow[]> {
    const { rows } = await this.pool.query<PortalLinkRow>(
      LIST_PORTAL_LINKS.text,
      LIST_PORTAL_LINKS.values({ subscription: subscriptionId }),
    );
    return rows.map(withoutDigest);
  }

  async revoke(subscriptionId: string, id: string, by: string): Promise<PortalLinkRow | null> {
    const { rows } = await this.pool.query<PortalLinkRow>(
      REVOKE_PORTAL_LINK.text,
      REVOKE_PORTAL_LINK.values({ subscription: subscriptionId, id, revokedBy: by }),
    );
    return rows[0] ? withoutDigest(rows[0]) : null;
  }

  async findByToken(token: string): Promise<PresentedPortalLink | null> {
    const { rows } = await this.pool.query<PresentedPortalLink>(
      FIND_PORTAL_LINK_BY_DIGEST.text,
      FIND_PORTAL_LINK_BY_DIGEST.values({ tokenDigest: portalTokenDigest(token) }),
    );
    return rows[0] ? withoutDigest(rows[0]) : null;
  }
}

/** The digest stays in the database: nothing above the repository needs it. */
function withoutDigest<T extends object>(row: T): T {
  const { token_digest: _, ...rest } = row as T & { token_digest?: unknown };
  return rest as T;
}
