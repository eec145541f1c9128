import { createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { AdminScope } from '@app/config';
import { ProblemException } from '@app/observability';
import { HeadOnlyGuard } from './before-body';
import { Principal, REALM } from './bearer.strategies';

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
    ? Array.isArray(strategy)
      ? 'The bearer token is neither a webhook token (WEBHOOK_TOKENS) nor an admin token (ADMIN_TOKENS)'
      : strategy === 'admin-bearer'
        ? 'The bearer token is not an admin token: this route needs one from ADMIN_TOKENS (webhook tokens are refused here)'
        : 'The bearer token is not a webhook token: this route needs one from WEBHOOK_TOKENS (admin tokens are refused here)'
    : /invalid_request/.test(challenge)
      ? 'The Authorization header is malformed; send "Authorization: Bearer <token>"'
      : 'Send "Authorization: Bearer <token>"';
  return ProblemException.of('unauthorized', detail, {}, { 'www-authenticate': challenge });
}

/** `read` is enough to list and inspect; `write` (which includes read) to change anything. */
const allows = (has: AdminScope | null, needs: AdminScope | null) => needs === null || has === 'write' || has === needs;

function bearerGuard(strategy: string | string[], needs: AdminScope | null = null) {
  @Injectable()
  class BearerGuard extends AuthGuard(strategy) implements HeadOnlyGuard {
    /** The token is in a header: authenticateBeforeBody runs this before the body is read. */
    readonly decidesFromHead = true;

    handleRequest<T>(err: unknown, user: T, info: unknown): T {
      if (err) throw err;
      if (!user) throw unauthorized(info, strategy);
      const principal = user as unknown as Principal;
      if (!allows(principal.scope, needs))
        throw ProblemException.of(
          'forbidden',
          `This operation needs an admin token with the "${needs}" scope; "${principal.name}" has "${principal.scope}". ` +
            'Use a write token (ADMIN_TOKENS entries are name:scope:token).',
          { missingScope: needs } as never,
        );
      return user;
    }
  }
  return BearerGuard;
}

export const WebhookAuthGuard = bearerGuard('webhook-bearer');
/** The read API over the store: the senders' webhook tokens, and any admin token (the console reads plants). */
export const StoreReadGuard = bearerGuard(['webhook-bearer', 'admin-bearer']);
/** Admin routes that list and inspect. */
export const AdminReadGuard = bearerGuard('admin-bearer', 'read');
/** Admin routes that change something: create, change, delete, rotate, retry, recover. */
export const AdminWriteGuard = bearerGuard('admin-bearer', 'write');

/** The authenticated admin's name, for the audit trail (never the token). */
export const Actor = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): string => ctx.switchToHttp().getRequest<{ user: Principal }>().user.name,
);

/** Whether the caller may change things (a write admin token): only such a caller sees subscriber URLs whole. */
export const CanWrite = createParamDecorator((_: unknown, ctx: ExecutionContext): boolean =>
  allows(ctx.switchToHttp().getRequest<{ user: Principal }>().user.scope, 'write'),
);
