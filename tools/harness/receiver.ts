import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the request was read whole: Date.now(). */
  at: number;
  /**
   * The same on the monotonic clock, with a fraction of a millisecond (performance.now()): Date.now() steps in whole
   * milliseconds, and a benchmark whose p95 is a few of them (the noisy neighbour's) read a 1 ms step as 20 %.
   */
  precise: number;
}

/** What the receiver answers on a path: a status, optionally after a delay or when released, with a body of its own. */
export type Behaviour = (
  req: Received,
  nth: number,
) => {
  status: number;
  delayMs?: number;
  hold?: Promise<void>;
  headers?: Record<string, string>;
  body?: string | Buffer;
};

/** A real HTTP subscriber on loopback that records every request and answers as each test scripts it. */
export class Receiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  /** Requests so far per path: counted, not filtered from `received`, so a benchmark's 100,000 stay cheap. */
  private readonly counts = new Map<string, number>();
  private server!: http.Server;
  url = '';
  /** TCP connections accepted so far: a sender that keeps its connections alive opens few. */
  connections = 0;

  /** `record`: false keeps nothing of what arrives (the fuzzer's 100,000 hostile bodies of up to 64 KiB). */
  constructor(private readonly record = true) {}

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        const r: Received = {
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          at: Date.now(),
          precise: performance.now(),
        };
        if (this.record) this.received.push(r);
        const nth = (this.counts.get(r.path) ?? 0) + 1;
        this.counts.set(r.path, nth);
        const answer: Behaviour = this.behaviours.get(r.path) ?? (() => ({ status: 204 }));
        const b = answer(r, nth);
        if (b.hold) await b.hold;
        if (b.delayMs) await new Promise((resolve) => setTimeout(resolve, b.delayMs));
        res.writeHead(b.status, b.headers).end(b.body ?? (b.status >= 400 ? 'receiver says no' : ''));
      });
    });
    this.server.on('connection', () => this.connections++);
    // Node's own default (5 s). A Node client keeps a connection alive only for the server's hinted timeout less
    // a second: with the 1 s this had, every request opened a new connection, and the benchmarks measured
    // that (21,250 connections for 21,250 requests) rather than what a real receiver costs.
    this.server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  behave(path: string, behaviour: Behaviour) {
    this.behaviours.set(path, behaviour);
  }

  /**
   * Requests received on a path, optionally only those for some plant ids: a worker that joins with a new group
   * also stores (and so delivers) plants that earlier suites left unconsumed.
   */
  on(path: string, ...plantIds: number[]): Received[] {
    return this.received.filter(
      (r) => r.path === path && (plantIds.length === 0 || plantIds.includes(JSON.parse(r.body).id)),
    );
  }

  async stop() {
    if (!this.server) return; // never started: a suite whose set-up failed before it still tears down
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
