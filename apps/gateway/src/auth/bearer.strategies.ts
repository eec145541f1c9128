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

function verifier(kind: Principal['kind'], tokens: TokenSet) {
  return (token: string): Principal | false => {
    const tokenIndex = tokens.match(token);
    return tokenIndex < 0 ? false : { kind, tokenIndex };
  };
}

/** Tokens from WEBHOOK_TOKENS: the New Plant webhook and the read API. */
@Injectable()
export class WebhookBearerStrategy extends PassportStrategy(Strategy, 'webhook-bearer') {
  private readonly check: (token: string) => Principal | false;
  constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
    super({ realm: REALM });
    this.check = verifier('webhook', new TokenSet(config.WEBHOOK_TOKENS));
  }
  validate(token: string) {
    return this.check(token);
  }
}

/** Tokens from ADMIN_TOKENS: subscriptions and deliveries. A webhook token is not an admin token. */
@Injectable()
export class AdminBearerStrategy extends PassportStrategy(Strategy, 'admin-bearer') {
  private readonly check: (token: string) => Principal | false;
  constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
    super({ realm: REALM });
    this.check = verifier('admin', new TokenSet(config.ADMIN_TOKENS));
  }
  validate(token: string) {
    return this.check(token);
  }
}
