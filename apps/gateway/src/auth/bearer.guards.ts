import type { IncomingHttpHeaders } from 'node:http';
import { createParamDecorator, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { AdminScope } from '@app/config';
import { ProblemException } from '@app/observability';
import { HeadOnlyGuard } from './before-body';
import { Principal, REALM } from './bearer.strategies';
import { PortalChangeRate } from './portal-change-rate';
import { assertPortalMayCall, confinedTo, RoutedRequest } from './portal-scope';
import { runStrategies } from './run-strategies';

/**
 * RFC 6750 failures: 401 with a WWW-Authenticate challenge. passport-http-bearer hands us its challenge
 * (`error="invalid_token"` when a token was given but is wrong); a malformed header gives none, and we answer
 * `invalid_request`.
 */
function unauthorized(info: unknown, strategy: string | string[]): ProblemException {
  // Passport hands over one challenge per strategy tried; each says the same.
  const first = Array.isArray(info) ? info[0] : info;
  const challenge =
    typeof first === 'string' && first.startsWith('Bearer')
      ? first
      : `Bearer realm="${REALM}", error="invalid_request"`;
  const detail = /invalid_token/.test(challenge)
    ? WRONG_TOKEN[[strategy].flat().join(',')]
    : /invalid_request/.test(challenge)
      ? 'The Authorization header is malformed; send "Authorization: Bearer <token>"'
      : 'Send "Authorization: Bearer <token>"';
  return ProblemException.of('unauthorized', detail, {}, { 'www-authenticate': challenge });
}

/** What a token no strategy of the route knows is told, by the route's strategies. */
const WRONG_TOKEN: Record<string, string> = {
  'webhook-bearer':
    'The bearer token is not a webhook token: this route needs one from WEBHOOK_TOKENS (admin tokens are refused here)',
  'admin-bearer,portal-bearer':
    'The bearer token is not an admin token: this route needs one from ADMIN_TOKENS (webhook tokens are refused ' +
    "here), or a portal link's token for its own subscription",
  'webhook-bearer,admin-bearer,portal-bearer':
    'The bearer token is neither a webhook token (WEBHOOK_TOKENS) nor an admin token (ADMIN_TOKENS)',
  'portal-bearer':
    "The bearer token is not a portal link's token: this route answers the token of a link made with " +
    'POST /subscriptions/{id}/portal-links',
};

/** `read` is enough to list and inspect; `write` (which includes read) to change anything. */
const allows = (has: AdminScope | null, needs: AdminScope | null) => needs === null || has === 'write' || has === needs;

const STRATEGY_OF: Record<Principal['kind'], string> = {
  webhook: 'webhook-bearer',
  admin: 'admin-bearer',
  portal: 'portal-bearer',
};

/**
 * Authenticates with the route's strategies, then authorizes: an admin token by its scope, a portal link by the
 * operations the document opens to it and its own subscription (portal-scope.ts), and what it changes by its rate
 * (portal-change-rate.ts). The before-body hook runs this first; when Nest runs it again (or a second guard of the
 * same route runs), the principal found then is reused, so a portal link is looked up (and charged) once per
 * request.
 */
function bearerGuard(strategy: string | string[], needs: AdminScope | null = null) {
  const strategies = [strategy].flat();
  @Injectable()
  class BearerGuard implements HeadOnlyGuard {
    /** The token is in a header: authenticateBeforeBody runs this before the body is read. */
    readonly decidesFromHead = true;
    // One instance for the app (AuthModule is global).
    @Inject(PortalChangeRate) private readonly changes!: PortalChangeRate;

    async canActivate(context: ExecutionContext): Promise<boolean> {
      const req = context
        .switchToHttp()
        .getRequest<RoutedRequest & { user?: Principal; headers: IncomingHttpHeaders }>();
      if (!(req.user && strategies.includes(STRATEGY_OF[req.user.kind]))) {
        if (strategies.includes('portal-bearer')) this.changes.refuseBeforeLookup(req);
        // The route's Passport strategies, run as AuthGuard runs them, without its per-request plumbing.
        // A strategy's error (a revoked portal link's 401, a database failure) rejects as it is.
        const { user, info } = await runStrategies<Principal>(strategies, req);
        if (!user) throw unauthorized(info, strategy);
        req.user = user;
      }
      authorize(req.user!, req);
      // Once it may call the route: a call outside its scope is a 403 and costs it nothing.
      if (req.user!.kind === 'portal') this.changes.charge(req.user!.portal!.linkId, req);
      return true;
    }
  }

  function authorize(principal: Principal, req: RoutedRequest) {
    if (principal.kind === 'portal') return assertPortalMayCall(principal, req);
    if (!allows(principal.scope, needs))
      throw ProblemException.of(
        'forbidden',
        `This operation needs an admin token with the "${needs}" scope; "${principal.name}" has "${principal.scope}". ` +
          'Use a write token (ADMIN_TOKENS entries are name:scope:token).',
        { missingScope: needs } as never,
      );
  }
  return BearerGuard;
}

export const WebhookAuthGuard = bearerGuard('webhook-bearer');
/**
 * The read API over the store: the senders' webhook tokens, and any admin token (the console reads plants). A
 * portal link is known here only to be told (403) that plants are not among its pages.
 */
export const StoreReadGuard = bearerGuard(['webhook-bearer', 'admin-bearer', 'portal-bearer']);
/** Admin routes that list and inspect (and a portal link, on the routes the document opens to it). */
export const AdminReadGuard = bearerGuard(['admin-bearer', 'portal-bearer'], 'read');
/** Admin routes that change something: create, change, delete, rotate, retry, recover (portal: as above). */
export const AdminWriteGuard = bearerGuard(['admin-bearer', 'portal-bearer'], 'write');
/** A portal link's own routes (GET /portal/session). */
export const PortalGuard = bearerGuard('portal-bearer');

const principalOf = (ctx: ExecutionContext) => ctx.switchToHttp().getRequest<{ user: Principal }>().user;

/** The authenticated caller's name, for the audit trail (never the token): an admin token's, `portal-link:<id>`. */
export const Actor = createParamDecorator((_: unknown, ctx: ExecutionContext): string => principalOf(ctx).name);

/**
 * Whether the caller may change things (a write admin token, or a portal link on its own subscription): only
 * such a caller sees subscriber URLs whole.
 */
export const CanWrite = createParamDecorator((_: unknown, ctx: ExecutionContext): boolean => {
  const principal = principalOf(ctx);
  return principal.kind === 'portal' || allows(principal.scope, 'write');
});

/** The subscription a portal link confines the caller to; null for an admin token (see portal-scope.ts). */
export const ConfinedTo = createParamDecorator((_: unknown, ctx: ExecutionContext) => confinedTo(principalOf(ctx)));

/** The caller itself (a portal link's session). */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => principalOf(ctx));
