import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemException } from '@app/observability';
import type { Principal } from '../auth/bearer.strategies';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { BodyBudget } from './body-budget';
import { BodyError, readBody } from './body-reader';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';
import { noteInexactNumbers } from './stored-as-sent';

/** What a refused body's sender is told to wait: reads end within seconds, or at HTTP_REQUEST_TIMEOUT_MS. */
export const BODY_RETRY_AFTER_S = 1;

/**
 * Who a body is charged to: the bearer credential the route's guards found before the body (a webhook token,
 * an admin token, a portal link: authenticateBeforeBody ran them), else the remote address. Every route that
 * reads a body has a token guard, so the address is the fallback of a route without one. Not X-Forwarded-For:
 * a sender could write any address there and take as many shares as it likes.
 */
export function senderOf(req: FastifyRequest): string {
  const principal = (req as FastifyRequest & { user?: Principal }).user;
  if (principal) return `${principal.kind}:${principal.name}`;
  return `address:${req.raw.socket?.remoteAddress ?? 'unknown'}`;
}

/**
 * The only body parser: JSON, read within the body budget (body-reader.ts) as Buffers, then parsed once whole.
 * Nest's body parsers are off (bodyParser: false) and Fastify's own are removed, so no other content type is read
 * (Fastify answers 415 without reading it). Every route that takes a body goes through here: the webhook, the
 * admin routes and the routes a portal link may call.
 */
export function parseJsonBodies(
  fastify: FastifyInstance,
  options: { maxBytes: number; budget: BodyBudget; metrics: GatewayMetrics },
): void {
  const { maxBytes, budget, metrics } = options;
  fastify.removeContentTypeParser(['text/plain', 'application/json']);
  // Fastify's own JSON parser (prototype-poisoning safe), with its errors turned into our problem kind.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser('application/json', (req, payload, done) => {
    const reservation = budget.open(senderOf(req));
    readBody(req.raw, payload, reservation, maxBytes, (err, bytes) => {
      if (err) return done(bodyProblem(err, maxBytes, budget, metrics));
      // The reservation is given back: it bounds bodies still arriving. What this parses to lives as long as the
      // request does (the webhooks waiting for Kafka are bounded by MAX_PUBLISHES_IN_FLIGHT).
      const body = bytes!.toString('utf8');
      // Many clients send `Content-Type: application/json` on a DELETE or an action POST with no body: that
      // is no body, not malformed JSON. Routes that need a body say so (validatedBody).
      if (body.length === 0) return done(null, undefined);
      if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
        return done(
          ProblemException.of(
            'nestingTooDeep',
            `The body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep; flatten it`,
          ),
          undefined,
        );
      }
      parseJson(req, body, (parseError: Error | null, value?: unknown) => {
        if (parseError) return done(ProblemException.of('malformedJson', 'The body is not valid JSON'), undefined);
        noteInexactNumbers(body, value); // refused by validatedBody, with the schema's errors
        done(null, value);
      });
    });
  });
}

/**
 * A refused body as the sender should read it. The connection is closed after the answer (Fastify does so for
 * every parser error), so the unread rest of the body is discarded, not read. Nothing of the request was kept:
 * retrying it is safe, the webhook's included.
 */
function bodyProblem(err: BodyError, maxBytes: number, budget: BodyBudget, metrics: GatewayMetrics): Error {
  const retry = { 'retry-after': String(BODY_RETRY_AFTER_S) };
  switch (err.refusal) {
    case 'too-large':
      return ProblemException.of(
        'payloadTooLarge',
        `The body is larger than ${maxBytes} bytes (WEBHOOK_MAX_BYTES), the most this gateway reads; send a smaller one`,
      );
    case 'share':
      metrics.bodiesRefused.inc({ reason: 'sender_share' });
      return ProblemException.of(
        'unavailable',
        `Bodies of your requests still arriving already hold ${budget.share} bytes of this gateway's memory, ` +
          'the most one sender may (HTTP_BODY_SENDER_SHARE_BYTES). Nothing of this request was kept: finish ' +
          'sending the others, or send fewer at once, and retry after Retry-After seconds',
        { reason: 'sender-share' } as never,
        retry,
      );
    case 'budget':
      metrics.bodiesRefused.inc({ reason: 'budget' });
      return ProblemException.of(
        'unavailable',
        `This gateway holds ${budget.limit} bytes of request bodies still arriving, the most it may ` +
          '(HTTP_BODY_BUDGET_BYTES). Nothing of this request was kept: retry after Retry-After seconds',
        { reason: 'body-budget' } as never,
        retry,
      );
    default:
      return err;
  }
}
