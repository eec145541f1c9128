import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Problem, PROBLEM_CONTENT_TYPE, ProblemException, problemForStatus, problemOf } from './problem';

const SEND_JSON = 'Send a JSON body with the header "Content-Type: application/json"';

/** Maps errors Fastify raises before Nest sees the request (body parsing) to problem kinds. */
const FASTIFY_CODES: Record<string, () => Problem> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => problemOf('unsupportedMediaType', SEND_JSON),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => problemOf('badRequest', 'Content-Length does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => problemOf('malformedJson', 'The body is empty'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => problemOf('malformedJson', 'The body is not valid JSON'),
};

export function toProblem(error: unknown): { problem: Problem; headers: Record<string, string> } {
  if (error instanceof ProblemException) return { problem: error.problem, headers: error.headers };
  const code = (error as { code?: string })?.code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { problem: problemOf('payloadTooLarge', (error as Error).message), headers: {} };
  }
  if (code && FASTIFY_CODES[code]) return { problem: FASTIFY_CODES[code](), headers: {} };
  if (error instanceof SyntaxError)
    return { problem: problemOf('malformedJson', 'The body is not valid JSON'), headers: {} };
  // A 415 raised by the framework says only "Unsupported Media Type": say what to send instead.
  const status415 = error instanceof HttpException ? error.getStatus() : (error as { statusCode?: number })?.statusCode;
  if (status415 === 415) return { problem: problemOf('unsupportedMediaType', SEND_JSON), headers: {} };
  if (error instanceof HttpException) {
    const response = error.getResponse();
    const detail = typeof response === 'string' ? response : (response as { message?: string }).message;
    return {
      problem: problemForStatus(error.getStatus(), Array.isArray(detail) ? detail.join('; ') : detail),
      headers: {},
    };
  }
  const status = (error as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { problem: problemForStatus(status, (error as Error).message), headers: {} };
  }
  return { problem: problemOf('internal'), headers: {} };
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, error: unknown, logger?: Logger) {
  const { problem, headers } = toProblem(error);
  // Our own 5xx (503 while Kafka is away) are expected and already counted; only surprises get a stack.
  if (problem.status >= 500 && logger && !(error instanceof ProblemException)) {
    logger.error({ err: error, reqId: request.id }, 'request failed');
  }
  reply
    .status(problem.status)
    .headers(headers)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify({ ...problem, instance: request.url.split('?')[0] }));
}

/**
 * Says what an error of a dependency means for the caller, when it knows it (a database that is away: 503 with
 * Retry-After, see @app/persistence's databaseProblem); undefined for any other error.
 */
export type ProblemTranslator = (error: unknown) => ProblemException | undefined;

/** Every error a controller raises leaves as application/problem+json, never with a stack trace. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(
    private readonly logger?: Logger,
    private readonly translators: ProblemTranslator[] = [],
  ) {}

  catch(exception: unknown, host: ArgumentsHost) {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const translated = exception instanceof ProblemException ? undefined : this.translate(exception);
    // Expected while a dependency is away: one line, no stack.
    if (translated) this.logger?.warn({ reqId: request.id }, `request failed: ${(exception as Error).message}`);
    sendProblem(http.getResponse<FastifyReply>(), request, translated ?? exception, this.logger);
  }

  private translate(exception: unknown): ProblemException | undefined {
    for (const translate of this.translators) {
      const problem = translate(exception);
      if (problem) return problem;
    }
    return undefined;
  }
}
