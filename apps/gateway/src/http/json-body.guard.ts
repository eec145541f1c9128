import { ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ProblemException } from '@app/observability';
import { HeadOnlyGuard } from '../auth/before-body';

/**
 * Fastify already answers 415 for a body it has no parser for; this covers a request that sent no
 * Content-Type at all, which would otherwise reach validation as an empty body.
 */
@Injectable()
export class JsonBodyGuard implements HeadOnlyGuard {
  readonly decidesFromHead = true;

  canActivate(context: ExecutionContext): boolean {
    const contentType = context.switchToHttp().getRequest<FastifyRequest>().headers['content-type'];
    if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) {
      throw ProblemException.of(
        'unsupportedMediaType',
        'Send a JSON body with the header "Content-Type: application/json"',
      );
    }
    return true;
  }
}
