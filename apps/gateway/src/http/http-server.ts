import { randomUUID } from 'node:crypto';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayConfig } from '@app/config';
import type { Logger } from 'pino';
import { pinoSink, ProblemException, RateLimitedLog, sendProblem } from '@app/observability';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { clientErrorHandler, serverLimits } from './http-limits';
import { API_CSP, BASE_SECURITY_HEADERS } from './security-headers';

/**
 * The body limit is enforced as the body is read (json-parser.ts: a chunked body over it is rejected with 413,
 * never truncated), and Fastify answers 415 for bodies it has no parser for. Nest's own body parsers are off
 * (bodyParser: false), so only JSON is parsed.
 */
export function createHttpAdapter(config: GatewayConfig, metrics: GatewayMetrics): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: config.WEBHOOK_MAX_BYTES,
    logger: false,
    ...serverLimits(config),
    clientErrorHandler: clientErrorHandler(metrics),
    frameworkErrors: routerProblem(metrics),
    // Requests arriving while we drain get our own 503 (problem+json, Retry-After) from instrumentHttp.
    return503OnClosing: false,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    },
  });
}

/**
 * Errors Fastify's router answers itself, before any hook or Nest's filter (its default is `application/json`
 * with a Fastify code): a path that is not valid percent-encoded UTF-8 (`/plants/%`, `%FF`) is a 400, and a path
 * parameter over Fastify's maxParamLength (100 characters) a 404, since no id the API hands out is that long and
 * every route documents 404 (Fastify's own 414 is documented nowhere). See docs/http-edge.md.
 */
const routerProblem = (metrics: GatewayMetrics) => (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
  metrics.clientErrors.inc({ kind: 'unroutable' }); // no onResponse hook runs for these either
  const problem =
    error.code === 'FST_ERR_BAD_URL'
      ? ProblemException.of(
          'badRequest',
          'The path is not valid percent-encoding: a "%" must start a %XX escape of UTF-8 bytes; encode the path',
        )
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? ProblemException.of(
            'notFound',
            'No resource has an id of more than 100 characters; check the path for the id you were given',
          )
        : ProblemException.of('badRequest', 'The request cannot be routed; check its method and path');
  // No hook runs for these (not even onSend): the headers every response carries are set here.
  reply.headers({ 'x-request-id': req.id, ...BASE_SECURITY_HEADERS, 'content-security-policy': API_CSP });
  // Answered before the body is read: a body that was announced is not read either.
  if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0) {
    reply.header('connection', 'close');
  }
  sendProblem(reply, req, problem);
};

/**
 * Request ids on every response, request metrics by route, one JSON log line per request, and a 503 for
 * requests that arrive once a drain has begun (they were not accepted; the sender retries elsewhere).
 */
export function instrumentHttp(
  app: NestFastifyApplication,
  metrics: GatewayMetrics,
  logger: Logger,
  shutdown: ShutdownState,
) {
  const fastify = app.getHttpAdapter().getInstance();
  const repeated = new RateLimitedLog(pinoSink(logger));
  // Callback-style hooks (see framing.ts).
  fastify.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (shutdown.draining) {
      reply.header('connection', 'close');
      sendProblem(reply, req, ProblemException.of('unavailable', 'Shutting down; retry', {}, { 'retry-after': '1' }));
    }
    done();
  });
  // While draining, every response closes its connection: keep-alive sockets would otherwise hold
  // server.close() open until their idle timeout.
  fastify.addHook('onSend', (_req, reply, payload, done) => {
    if (shutdown.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions?.url ?? 'unmatched';
    metrics.requests.inc({ method: req.method, route, status: reply.statusCode });
    const line = {
      reqId: req.id,
      method: req.method,
      route,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    // Every request is counted (the flow summary reports them); a line for each would flood the log under a
    // hostile sender or an outage, so refusals and 503s are rate-limited per kind.
    if (reply.statusCode === 503) repeated.log('warn', '503', line, 'request answered 503: see the warning before it');
    // 501 and 505 answer what a client sent (a transfer coding, an HTTP version), not a failure of ours.
    else if (reply.statusCode >= 500 && reply.statusCode !== 501 && reply.statusCode !== 505)
      logger.error(line, 'request failed');
    else if (reply.statusCode >= 400) repeated.log('info', `${reply.statusCode} ${route}`, line, 'request refused');
    else logger.debug(line, 'request');
    done();
  });
}
