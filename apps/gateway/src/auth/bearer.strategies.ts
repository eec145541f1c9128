import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { TokenSet } from './token-set';

export const REALM = 'plant-store';

export interface Principal {
  kind: 'webhook' | 'admin';
  /** Which configured token matched, for audit logs without the token itself. */
  tokenIndex: number;
}

/** A passport-http-bearer strategy accepting the tokens one config list holds. */
function bearerStrategy(name: string, kind: Principal['kind'], tokensOf: (c: GatewayConfig) => string[]) {
  @Injectable()
  class BearerStrategy extends PassportStrategy(Strategy, name) {
    private readonly tokens: TokenSet;
    constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
      super({ realm: REALM });
      this.tokens = new TokenSet(tokensOf(config));
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
      const tokenIndex = this.tokens.match(token);
      return tokenIndex < 0 ? false : { kind, tokenIndex };
    }
  }
  return BearerStrategy;
}

/** Tokens from WEBHOOK_TOKENS: the New Plant webhook and the read API. */
export const WebhookBearerStrategy = bearerStrategy('webhook-bearer', 'webhook', (c) => c.WEBHOOK_TOKENS);
/** Tokens from ADMIN_TOKENS: subscriptions and deliveries. A webhook token is not an admin token. */
export const AdminBearerStrategy = bearerStrategy('admin-bearer', 'admin', (c) => c.ADMIN_TOKENS);
