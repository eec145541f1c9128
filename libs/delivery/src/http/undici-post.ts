import type { LookupFunction } from 'node:net';
import { Agent, Dispatcher } from 'undici';
import { guardedLookup } from '../ssrf';
import type { PostResult, WebhookTransport } from './transport';

const timedOut = (ms: number) => Object.assign(new Error(`timed out after ${ms} ms`), { code: 'ETIMEDOUT' });

/**
 * Deliveries over undici: one keep-alive pool per receiver origin (undici's Agent), driven through its
 * dispatch handler API (no stream, no AbortSignal per request), which bench:delivery's floor measures at less
 * CPU per request than node:http. Unless private networks are allowed, every connection resolves its name
 * through the SSRF guard, on the address actually connected to. Redirects are never followed (undici follows
 * none unless told to).
 */
export function undiciTransport(allowPrivate: boolean, connectionsPerOrigin = 256): WebhookTransport {
  const lookup: LookupFunction | undefined = allowPrivate ? undefined : guardedLookup();
  const agent = new Agent({
    connections: connectionsPerOrigin,
    pipelining: 1,
    keepAliveTimeout: 4000,
    keepAliveMaxTimeout: 60000,
    connect: lookup ? { lookup } : {},
  });
  return {
    post(url, headers, body, timeoutMs, maxBody = 1024): Promise<PostResult> {
      const target = new URL(url);
      return new Promise((resolve, reject) => {
        let controller: Dispatcher.DispatchController | null = null;
        let settled = false;
        let status = 0;
        let responseHeaders: PostResult['headers'] = {};
        const chunks: Buffer[] = [];
        let size = 0;
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          fn();
        };
        // One deadline for the whole exchange (waiting for a connection, connect, send, response).
        const deadline = setTimeout(() => {
          const err = timedOut(timeoutMs);
          settle(() => reject(err));
          controller?.abort(err);
        }, timeoutMs);
        agent.dispatch(
          { origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', headers, body },
          {
            onRequestStart(c) {
              controller = c;
              if (settled) c.abort(timedOut(timeoutMs));
            },
            onResponseStart(_c, statusCode, h) {
              status = statusCode;
              responseHeaders = h;
            },
            // The first `maxBody` bytes are kept; the rest is read and dropped, so the connection can be reused.
            onResponseData(_c, chunk) {
              if (size < maxBody) chunks.push(chunk);
              size += chunk.length;
            },
            onResponseEnd() {
              settle(() =>
                resolve({
                  status,
                  headers: responseHeaders,
                  body: Buffer.concat(chunks).subarray(0, maxBody).toString('utf8'),
                }),
              );
            },
            onResponseError(_c, err) {
              // undici wraps a socket's error; the guard's refusal (ESSRFBLOCKED) or ECONNREFUSED is its cause.
              const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
              settle(() => reject(cause?.code ? cause : err));
            },
          },
        );
      });
    },
    close: () => agent.close(),
  };
}
