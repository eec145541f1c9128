import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
  failSpan,
  Span,
  SpanKind,
  Tracing,
} from '@app/observability';

const spans = new WeakMap<FastifyRequest, Span>();

/** The request's SERVER span, when tracing is on: the parent of whatever the handler does (a Kafka send). */
export const requestSpan = (req: FastifyRequest): Span | undefined => spans.get(req);

/**
 * One SERVER span per request (HTTP semantic conventions: `{method} {route}`, the route template, never the
 * query: a token misplaced there must not reach a collector). It continues the sender's `traceparent`.
 * Registered only when tracing is on, so it costs nothing otherwise.
 */
export function traceRequests(fastify: FastifyInstance, tracing: Tracing): void {
  if (!tracing.enabled) return;
  fastify.addHook('onRequest', async (req) => {
    const route = req.routeOptions?.url;
    const incoming = req.headers.traceparent;
    const span = tracing.startSpan(
      route ? `${req.method} ${route}` : req.method,
      SpanKind.SERVER,
      {
        [ATTR_HTTP_REQUEST_METHOD]: req.method,
        [ATTR_URL_PATH]: req.url.split('?')[0],
        [ATTR_URL_SCHEME]: req.protocol,
        ...(route ? { [ATTR_HTTP_ROUTE]: route } : {}),
        ...(req.socket.localPort ? { [ATTR_SERVER_PORT]: req.socket.localPort } : {}),
        // Bounded: it goes on to a collector with every request.
        ...(req.headers['user-agent'] ? { [ATTR_USER_AGENT_ORIGINAL]: req.headers['user-agent'].slice(0, 256) } : {}),
      },
      typeof incoming === 'string' ? incoming : undefined,
    );
    spans.set(req, span);
  });
  fastify.addHook('onResponse', async (req, reply) => {
    const span = spans.get(req);
    if (!span) return;
    spans.delete(req);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
    // Server spans: only 5xx are errors (a 4xx is the client's).
    if (reply.statusCode >= 500) failSpan(span, String(reply.statusCode));
    span.end();
  });
  fastify.addHook('onRequestAbort', async (req) => {
    const span = spans.get(req);
    if (!span) return;
    spans.delete(req);
    failSpan(span, 'aborted', 'the client closed the connection before the answer');
    span.end();
  });
}
