import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { AdminScope, APP_CONFIG, GatewayConfig } from '@app/config';
import { TokenSet } from './token-set';

export const REALM = 'plant-store';

export interface Principal {
  kind: 'webhook' | 'admin';
  /** Who, for the audit trail and logs, without the token itself: an admin token's name, `webhook-<n>`. */
  name: string;
  /** What an admin token may do; a webhook token has no admin scope. */
  scope: AdminScope | null;
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
      return super.authenticate({ headers: req.headers } as never, options as object);
    }

    validate(token: string): Principal | false {
      const i = this.tokens.match(token);
      return i < 0 ? false : { kind, name: this.accepted[i].name, scope: this.accepted[i].scope };
    }
  }
  return BearerStrategy;
}

/** Tokens from WEBHOOK_TOKENS: the New Plant webhook and the read API. */
export const WebhookBearerStrategy = bearerStrategy('webhook-bearer', 'webhook', (c) =>
  c.WEBHOOK_TOKENS.map((token, i) => ({ token, name: `webhook-${i + 1}`, scope: null })),
);
/** Tokens from ADMIN_TOKENS, each with its name and scope. A webhook token is not an admin token. */
export const AdminBearerStrategy = bearerStrategy('admin-bearer', 'admin', (c) => c.ADMIN_TOKENS);
