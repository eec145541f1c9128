import http from 'node:http';
import type { Socket } from 'node:net';
import { GatewayConfig } from '@app/config';
import { problemOf, PROBLEM_CONTENT_TYPE } from '@app/observability';
import { GatewayMetrics } from '../metrics/gateway-metrics';

/**
 * What bounds a client's hold on the gateway: the time to send headers (HTTP_HEADERS_TIMEOUT_MS) and the
 * whole request, body included (HTTP_REQUEST_TIMEOUT_MS), checked every second rather than Node's default
 * 30 s; how long an idle keep-alive connection stays open; and how many connections may be open at once
 * (HTTP_MAX_CONNECTIONS; Node closes the ones beyond it as they arrive).
 */
export function serverLimits(config: GatewayConfig) {
  return {
    http: {
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
      // Node's own 400 for a missing Host is bare; refuseAmbiguousFraming answers it as problem+json.
      requireHostHeader: false,
    } as http.ServerOptions,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  };
}

/**
 * Errors Node raises before a request reaches Fastify (a timeout while headers or body trickle in, headers
 * too large, bytes that are not HTTP), answered as problem+json on the raw socket, then closed.
 */
export function clientErrorHandler(metrics: GatewayMetrics) {
  const answered = new WeakSet<Socket>();
  return (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // Closing lingers (below), and each chunk the sender still writes meets the failed parser again: one answer.
    if (answered.has(socket)) return;
    answered.add(socket);
    const [status, kind, detail] =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'timeout', 'The request (headers or body) took too long to arrive; send it in one go']
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'header_overflow', 'The request headers are too large']
          : [400, 'malformed', 'The request is not valid HTTP/1.1'];
    metrics.clientErrors.inc({ kind });
    const body = JSON.stringify({
      ...(status === 400
        ? problemOf('badRequest', detail)
        : { type: 'about:blank', title: http.STATUS_CODES[status], status, detail }),
    });
    const headersSent = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (socket.writable && !headersSent) {
      socket.write(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    // A lingering close (lingering-close.ts), not destroy(): the sender may still be writing (a body behind headers
    // too large), and the reset that destroy() draws can drop this answer before the sender reads it.
    socket.destroySoon();
  };
}

/** Open connections, counted and capped, so a drain can wait for them to close and metrics can show them. */
export class ConnectionTracker {
  private readonly open = new Set<Socket>();

  constructor(server: http.Server, maxConnections: number, metrics: GatewayMetrics) {
    server.maxConnections = maxConnections;
    server.on('connection', (socket: Socket) => {
      this.open.add(socket);
      metrics.connections.set(this.open.size);
      socket.once('close', () => {
        this.open.delete(socket);
        metrics.connections.set(this.open.size);
      });
    });
    // Node closes a connection beyond maxConnections as soon as it is accepted.
    server.on('drop', () => metrics.connectionsDropped.inc());
  }

  get size(): number {
    return this.open.size;
  }

  /** Resolves once no connection is open, or after `ms`, whichever comes first. */
  async closedOrAfter(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.open.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }
}
