import type { IncomingHttpHeaders } from 'node:http';

/**
 * How a webhook goes over the wire. Deliveries and test sends use undiciTransport (./undici-post.ts);
 * bench:delivery measures a node:http one beside it (tools/bench/node-http-transport.ts).
 */
export interface WebhookTransport {
  /** The status, headers and first `maxBody` bytes of the answer; rejects on a refusal, timeout or reset. */
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    timeoutMs: number,
    maxBody?: number,
    /** A receiver's own CA and a client certificate (mTLS): the connection is made with them. */
    tls?: ClientTls,
  ): Promise<PostResult>;
  /** Closes its kept-alive connections. */
  close(): Promise<void>;
}

export interface PostResult {
  status: number;
  headers: IncomingHttpHeaders;
  /** The first `maxBody` bytes of the response; the rest is read and dropped. */
  body: string;
}

/** TLS to an HTTPS receiver beyond the public CAs: its CA, a client certificate and key (mTLS). */
export interface ClientTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized?: boolean;
}
