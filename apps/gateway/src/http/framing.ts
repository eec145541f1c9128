import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ProblemException, sendProblem } from '@app/observability';
import { LoopHeaders } from '@app/contracts';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { isRefusedConnection } from './chunk-limit';

/**
 * Header fields a request may carry once. Node keeps the first of a repeated one and drops the rest without a
 * word (the first group, Node's own list), or joins the copies with ", " (the second: ours, read as one value);
 * a proxy in front may keep the last, or route by it. Where the two could read a request differently (which
 * host, which token, which body type, which idempotency key), the request is refused instead: RFC 9110 §5.3
 * allows a field to repeat only if its definition makes it a list, and none of these is one.
 */
const SINGLE_FIELDS = new Set([
  'host',
  'authorization',
  'proxy-authorization',
  'content-length',
  'content-type',
  'user-agent',
  'referer',
  'from',
  'if-modified-since',
  'if-unmodified-since',
  'max-forwards',
  'etag',
  'last-modified',
  'location',
  'retry-after',
  'server',
  'age',
  'expires',
  'transfer-encoding',
  'content-encoding',
  'webhook-id',
  'idempotency-key',
  'traceparent',
  'x-request-id',
  LoopHeaders.hops,
  LoopHeaders.origin,
]);

/** RFC 9112 §3.2 / RFC 3986: uri-host [":" port]; a reg-name, an IPv4 address or a bracketed IP literal. */
const VALID_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::\d{0,5})?$/;

type Refusal = [kind: 'badRequest' | 'notImplemented' | 'versionNotSupported', detail: string];

/**
 * What llhttp (Node's parser) lets through but a front proxy could read differently from us, refused before
 * routing, auth or body (see docs/http-edge.md for what llhttp itself already refuses, tested alongside):
 * a repeated single field, an invalid Host, a request target whose authority is not the Host, an HTTP version
 * other than 1.0 and 1.1, a transfer coding other than chunked alone, and Transfer-Encoding in HTTP/1.0.
 * Refusals close the connection: what follows on it can no longer be framed with confidence.
 */
export function refuseAmbiguousFraming(fastify: FastifyInstance, metrics: GatewayMetrics): void {
  // Callback-style, as every hook on the request path: an async hook costs a promise and a microtask per request.
  // Fastify stops the chain once a hook has answered (reply.sent), as it does when an async hook returns reply.
  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    // Already answered on the socket, from its bytes (chunk-limit.ts): nothing read from it is served.
    if (isRefusedConnection(req.raw.socket)) {
      reply.hijack(); // the socket is closing once that answer is written
      return done();
    }
    const refusal = ambiguity(req);
    if (refusal) {
      const [kind, detail] = refusal;
      metrics.clientErrors.inc({ kind: kind === 'versionNotSupported' ? 'http_version' : 'ambiguous_framing' });
      reply.header('connection', 'close');
      sendProblem(reply, req, ProblemException.of(kind, detail));
    }
    done();
  });
}

function ambiguity(req: FastifyRequest): Refusal | null {
  const raw = req.raw;
  if (raw.httpVersion !== '1.1' && raw.httpVersion !== '1.0') {
    return ['versionNotSupported', `HTTP/${raw.httpVersion} is not served over this connection: send HTTP/1.1`];
  }
  const seen = new Set<string>();
  for (let i = 0; i < raw.rawHeaders.length; i += 2) {
    const name = raw.rawHeaders[i].toLowerCase();
    if (!SINGLE_FIELDS.has(name)) continue;
    if (seen.has(name)) return ['badRequest', `The header ${raw.rawHeaders[i]} is sent more than once; send it once`];
    seen.add(name);
  }
  const host = req.headers.host;
  if (host === undefined && raw.httpVersion === '1.1') return ['badRequest', 'An HTTP/1.1 request needs a Host header'];
  if (host !== undefined && !VALID_HOST.test(host)) return ['badRequest', 'The Host header is not a valid host[:port]'];
  if (!raw.url?.startsWith('/') && raw.url !== '*') {
    // Absolute form (RFC 9112 §3.2.2): its authority wins over Host, which a proxy may have routed by.
    const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw.url ?? '')?.[1];
    if (authority === undefined || authority.toLowerCase() !== (host ?? '').toLowerCase()) {
      return ['badRequest', 'The request target names another host than the Host header; send the path alone'];
    }
  }
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) {
    if (raw.httpVersion === '1.0') return ['badRequest', 'Transfer-Encoding is not defined in HTTP/1.0: send HTTP/1.1'];
    const codings = te.toLowerCase().split(',');
    // RFC 9112 §6.3: a request whose last coding is not chunked has no length to read: 400 and close. llhttp
    // refuses it too, but only after Node has emitted the request, so this hook may see it first.
    if (codings[codings.length - 1].trim() !== 'chunked')
      return [
        'badRequest',
        'The body has no length: send it chunked (the last transfer coding), or with a Content-Length',
      ];
    if (codings.length > 1) {
      return [
        'notImplemented',
        `Transfer-Encoding "${te}" is not supported: send the body chunked, or with a Content-Length`,
      ];
    }
  }
  return null;
}
