import http from 'node:http';
import https from 'node:https';
import type { PostResult, WebhookTransport } from '@app/delivery';

// The node:http transport deliveries used before undici, kept for bench:delivery's floor, which measures both
// in the same run (node:http cost 36-43 µs of CPU per request against undici's 22-29; fetch costs several times
// more). Keep-alive agents; the floor sends to the bench's own receiver, so there is no SSRF guard here.
type Agents = Record<'http:' | 'https:', http.Agent>;

export function nodeHttpTransport(): WebhookTransport {
  const agents: Agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }),
  };
  return {
    post: (url, headers, body, timeoutMs, maxBody) => httpPost(agents, url, headers, body, timeoutMs, maxBody),
    close: async () => {
      for (const agent of Object.values(agents)) agent.destroy();
    },
  };
}

function httpPost(
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
