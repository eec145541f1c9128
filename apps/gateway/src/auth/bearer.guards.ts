import { Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ProblemException } from '@app/observability';
import { REALM } from './bearer.strategies';

/**
 * RFC 6750 failures: 401 with a WWW-Authenticate challenge. passport-http-bearer hands us its challenge
 * (`error="invalid_token"` when a token was given but is wrong); a malformed header gives none, and we answer
 * `invalid_request`.
 */
function unauthorized(info: unknown): ProblemException {
  const challenge =
    typeof info === 'string' && info.startsWith('Bearer') ? info : `Bearer realm="${REALM}", error="invalid_request"`;
  const detail = /invalid_token/.test(challenge)
    ? 'The bearer token is not valid'
    : /invalid_request/.test(challenge)
      ? 'The Authorization header is malformed; send "Authorization: Bearer <token>"'
      : 'Send "Authorization: Bearer <token>"';
  return ProblemException.of('unauthorized', detail, {}, { 'www-authenticate': challenge });
}

function bearerGuard(strategy: string) {
  @Injectable()
  class BearerGuard extends AuthGuard(strategy) {
    handleRequest<T>(err: unknown, user: T, info: unknown): T {
      if (err) throw err;
      if (!user) throw unauthorized(info);
      return user;
    }
  }
  return BearerGuard;
}

export const WebhookAuthGuard = bearerGuard('webhook-bearer');
export const AdminAuthGuard = bearerGuard('admin-bearer');
