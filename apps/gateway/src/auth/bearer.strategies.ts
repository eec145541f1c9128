import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { AdminScope, APP_CONFIG, GatewayConfig } from '@app/config';
import { PortalLinkRepository, PresentedPortalLink } from '@app/persistence';
import { hasPortalTokenShape } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { REALM } from './realm';
import { TokenSet } from './token-set';
import { UnknownPortalTokens } from './unknown-portal-tokens';

/** How a portal link is named as an actor (audit events, `Actor`): this, then the link's id. */
export const PORTAL_LINK_ACTOR = 'portal-link:';

export { REALM };

export interface Principal {
  kind: 'webhook' | 'admin' | 'portal';
  /**
   * Who, for the audit trail and logs, without the token itself: an admin token's name, `webhook-<n>`,
   * `portal-link:<link id>`.
   */
  name: string;
  /** What an admin token may do; a webhook token and a portal link have no admin scope. */
  scope: AdminScope | null;
  /** A portal link's: the one subscription it opens, the link, and when it expires. */
  portal?: { subscriptionId: string; linkId: string; expiresAt: Date };
}

interface Accepted {
  token: string;
  name: string;
  scope: AdminScope | null;
}

/** A passport-http-bearer strategy accepting the tokens one config list holds. */
function bearerStrategy(name: string, kind: Principal['kind'], tokensOf: (c: GatewayConfig) => Accepted[]) {
  @Injectable()
  class BearerStrategy extends PassportStrategy(Strategy, name) {
    private readonly tokens: TokenSet;
    private readonly accepted: Accepted[];
    constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
      super({ realm: REALM });
      this.accepted = tokensOf(config);
      this.tokens = new TokenSet(this.accepted.map((a) => a.token));
    }
    /**
     * The Authorization header only. passport-http-bearer also takes `access_token` from the query string
     * and the body (RFC 6750 §2.2, §2.3): a token there ends up in access logs, proxies and, for a webhook
     * body, in the event itself. Requests that try it are refused before this (credential-placement.ts).
     */
    authenticate(req: { headers: IncomingHttpHeaders }, options?: unknown) {
      return super.authenticate(headersOnly(req), options as object);
    }

    validate(token: string): Principal | false {
      const i = this.tokens.match(token);
      return i < 0 ? false : { kind, name: this.accepted[i].name, scope: this.accepted[i].scope };
    }
  }
  return BearerStrategy;
}

/** The Authorization header only, as above (credential-placement.ts refuses the other places). */
const headersOnly = (req: { headers: IncomingHttpHeaders }) => ({ headers: req.headers }) as never;

/** Tokens from WEBHOOK_TOKENS: the New Plant webhook and the read API. */
export const WebhookBearerStrategy = bearerStrategy('webhook-bearer', 'webhook', (c) =>
  c.WEBHOOK_TOKENS.map((token, i) => ({ token, name: `webhook-${i + 1}`, scope: null })),
);
/** Tokens from ADMIN_TOKENS, each with its name and scope. A webhook token is not an admin token. */
export const AdminBearerStrategy = bearerStrategy('admin-bearer', 'admin', (c) => c.ADMIN_TOKENS);

/** What the portal strategy is given of a request: its headers (the token's only place) and where it came from. */
interface Sender {
  headers: IncomingHttpHeaders;
  address: string;
}

/**
 * Portal link tokens (`psp_…`): looked up by their SHA-256 in `portal_links` (one indexed read). A token not of
 * the shape links are issued in (`PORTAL_TOKEN_PATTERN`) is refused before it: `Bearer psp_x` costs no query; so
 * is any token from an address whose tokens keep opening nothing (unknown-portal-tokens.ts). A link that expired,
 * was revoked, whose subscription was deleted or is operational (made before such links were refused) is refused
 * here with a 401 that says which, rather than as an unknown token: the subscriber then knows to ask for a new
 * link. What the principal may reach is decided by the guards (portal-scope.ts).
 */
@Injectable()
export class PortalBearerStrategy extends PassportStrategy(Strategy, 'portal-bearer') {
  constructor(
    private readonly links: PortalLinkRepository,
    private readonly unknown: UnknownPortalTokens,
  ) {
    super({ realm: REALM, passReqToCallback: true });
  }

  authenticate(req: { headers: IncomingHttpHeaders; socket?: { remoteAddress?: string } }, options?: unknown) {
    const from: Sender = { headers: req.headers, address: req.socket?.remoteAddress ?? 'unknown' };
    return super.authenticate(from as never, options as object);
  }

  async validate(from: Sender, token: string): Promise<Principal | false> {
    if (!hasPortalTokenShape(token)) return false;
    this.unknown.refuseBeforeLookup(from.address, token);
    const link = await this.links.findByToken(token);
    if (!link) {
      this.unknown.missed(from.address);
      return false;
    }
    this.unknown.found(token);
    const refused = whyRefused(link);
    if (refused)
      throw ProblemException.of(
        'unauthorized',
        `${refused.detail} Ask the Plant Store operator who sent it for a new link.`,
        { reason: refused.reason } as never,
        { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token"` },
      );
    return {
      kind: 'portal',
      name: `${PORTAL_LINK_ACTOR}${link.id}`,
      scope: null,
      portal: { subscriptionId: link.subscription_id, linkId: link.id, expiresAt: link.expires_at },
    };
  }
}

/** Why a known link no longer opens anything (`reason` is in the problem too, for a page to choose its words). */
function whyRefused(link: PresentedPortalLink): { reason: string; detail: string } | null {
  if (link.revoked_at)
    return { reason: 'revoked', detail: `This portal link was revoked on ${link.revoked_at.toISOString()}.` };
  if (link.subscription_deleted)
    return { reason: 'deleted', detail: 'The subscription this portal link opened was deleted.' };
  if (link.subscription_operational)
    return {
      reason: 'operational',
      detail: "This portal link opens an operational subscription (Plant Store's own events), which is the operator's.",
    };
  if (link.expires_at <= link.checked_at)
    return { reason: 'expired', detail: `This portal link expired on ${link.expires_at.toISOString()}.` };
  return null;
}
