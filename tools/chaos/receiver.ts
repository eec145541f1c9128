// The subscriber: a real HTTP server that records every New Plant delivered to it (by webhook-id and plant id,
// with the time of the first) and, on demand, answers 500 for a while, as a subscriber in trouble would.
import http from 'node:http';
import { AddressInfo } from 'node:net';

export class ChaosReceiver {
  /** webhook-id → how many times it was acknowledged (more than once: a redelivery). */
  readonly acknowledged = new Map<string, number>();
  /** webhook-id → when each acknowledged send arrived (ms since epoch): to tell a second send's cause. */
  readonly arrivals = new Map<string, number[]>();
  /** plant id → when it was first acknowledged (ms since epoch). */
  readonly firstDelivered = new Map<number, number>();
  refused = 0;
  private failUntil = 0;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (Date.now() < this.failUntil) {
        this.refused++;
        res.writeHead(500).end('failing on purpose');
        return;
      }
      const id = String(req.headers['webhook-id'] ?? '');
      this.acknowledged.set(id, (this.acknowledged.get(id) ?? 0) + 1);
      this.arrivals.set(id, [...(this.arrivals.get(id) ?? []), Date.now()]);
      try {
        const plant = JSON.parse(Buffer.concat(chunks).toString()) as { id: number };
        if (!this.firstDelivered.has(plant.id)) this.firstDelivered.set(plant.id, Date.now());
      } catch {
        /* not a plant: counted by webhook-id only */
      }
      res.writeHead(204).end();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Answers 500 to everything for `ms` from now. */
  fail(ms: number) {
    this.failUntil = Date.now() + ms;
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(r));
  }
}
