import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { guardedLookup } from '../ssrf';

// node:http with keep-alive agents: the transport deliveries used before undici (./undici-post.ts), kept as
// bench:delivery's comparison (it cost 36-43 µs of CPU per request against undici's 22-29 in the same runs;
// fetch costs several times more). Redirects are never followed (a 3xx is a failed attempt). Unless private
// networks are allowed, the agents resolve names through the SSRF guard: the address checked is the one the
// socket connects to (IP literals never reach a lookup; the sender checks those itself).
export type Agents = Record<'http:' | 'https:', http.Agent>;

export function deliveryAgents(allowPrivate: boolean): Agents {
  const lookup: LookupFunction | undefined = allowPrivate ? undefined : guardedLookup();
  return {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo', lookup } as http.AgentOptions),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo', lookup } as https.AgentOptions),
  };
}

/** How a webhook goes over the wire: node:http (nodeHttpTransport) or undici (undiciTransport). */
export interface WebhookTransport {
  /** The status, headers and first `maxBody` bytes of the answer; rejects on a refusal, timeout or reset. */
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
    maxBody?: number,
  ): Promise<PostResult>;
  /** Closes its kept-alive connections. */
  close(): Promise<void>;
}

/** node:http with keep-alive agents, as a WebhookTransport. */
export function nodeHttpTransport(allowPrivate: boolean): WebhookTransport {
  const agents = deliveryAgents(allowPrivate);
  return {
    post: (url, headers, body, timeoutMs, maxBody) => httpPost(agents, url, headers, body, timeoutMs, maxBody),
    close: async () => {
      for (const agent of Object.values(agents)) agent.destroy();
    },
  };
}

export interface PostResult {
  status: number;
  headers: http.IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  /** The first `maxBody` bytes of the response; the rest is discarded unread. */
  body: string;
}

export function httpPost(
  agents: Agents,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  maxBody = 1024,
): Promise<PostResult> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        agent: agents[target.protocol as 'http:' | 'https:'],
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < maxBody) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => {
          clearTimeout(deadline);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).subarray(0, maxBody).toString('utf8'),
          });
        });
        res.on('error', fail);
      },
    );
    // One deadline for the whole exchange (connect, send, response), not just socket idleness.
    const deadline = setTimeout(
      () => req.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    function fail(err: Error) {
      clearTimeout(deadline);
      reject(err);
    }
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', fail);
    req.end(body);
  });
}
