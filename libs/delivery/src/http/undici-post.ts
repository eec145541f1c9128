import { createHash } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { Agent, Dispatcher } from 'undici';
import { guardedLookup } from '../ssrf';
import type { ClientTls, PostResult, WebhookTransport } from './transport';

const timedOut = (ms: number) => Object.assign(new Error(`timed out after ${ms} ms`), { code: 'ETIMEDOUT' });

/**
 * Agents for receivers with a CA or client certificate of their own (mTLS) kept open at once: undici takes TLS
 * options per agent, not per request, so each certificate has its own. Few subscriptions have one; past this the
 * least recently used is closed (gracefully: requests under way finish), and opened again when next needed.
 */
const MAX_TLS_AGENTS = 64;

/**
 * Deliveries over undici: one keep-alive pool per receiver origin (undici's Agent), driven through its
 * dispatch handler API (no stream, no AbortSignal per request), which bench:delivery's floor measures at less
 * CPU per request than node:http. Unless private networks are allowed, every connection resolves its name
 * through the SSRF guard, on the address actually connected to; an mTLS agent connects through the same guard.
 * Redirects are never followed (undici follows none unless told to).
 */
export function undiciTransport(allowPrivate: boolean, connectionsPerOrigin = 256): WebhookTransport {
  const lookup: LookupFunction | undefined = allowPrivate ? undefined : guardedLookup();
  const guarded = lookup ? { lookup } : {};
  const newAgent = (connect: Agent.Options['connect']) =>
    new Agent({
      connections: connectionsPerOrigin,
      pipelining: 1,
      keepAliveTimeout: 4000,
      keepAliveMaxTimeout: 60000,
      connect,
    });
  const agent = newAgent(guarded);
  const tlsAgents = new LRUCache<string, Agent>({
    max: MAX_TLS_AGENTS,
    // Only an agent dropped for room is closed here: close() below closes (and awaits) the ones still kept.
    dispose: (a, _key, reason) => {
      if (reason === 'evict') void a.close().catch(() => undefined);
    },
  });
  const agentFor = (tls: ClientTls | undefined): Agent => {
    if (!tls) return agent;
    const key = tlsKey(tls);
    let found = tlsAgents.get(key);
    if (!found) {
      found = newAgent({ ...guarded, ...definedOnly(tls) });
      tlsAgents.set(key, found);
    }
    return found;
  };
  // Where each URL goes, parsed once (the same few URLs go out thousands of times a second); bounded.
  const targets = new LRUCache<string, { origin: string; path: string }>({ max: 4096 });
  const targetOf = (url: string) => {
    let found = targets.get(url);
    if (!found) {
      const u = new URL(url);
      found = { origin: u.origin, path: `${u.pathname}${u.search}` };
      targets.set(url, found);
    }
    return found;
  };
  return {
    post(url, headers, body, timeoutMs, maxBody = 1024, tls?: ClientTls): Promise<PostResult> {
      const target = targetOf(url);
      const dispatcher = agentFor(tls);
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
        dispatcher.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers, body },
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
    close: async () => {
      const kept = [...tlsAgents.values()];
      tlsAgents.clear();
      await Promise.all([agent, ...kept].map((a) => a.close()));
    },
  };
}

/** One agent per CA, certificate, key and verification: their hash, so no key is kept as a map key in the clear. */
const tlsKey = (t: ClientTls) =>
  createHash('sha256')
    .update(JSON.stringify([t.ca ?? '', t.cert ?? '', t.key ?? '', t.rejectUnauthorized !== false]))
    .digest('base64');

const definedOnly = (t: ClientTls) =>
  Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined)) as ClientTls;
