// The subscriber: the suites' receiver (tools/harness/receiver.ts), recording every New Plant delivered to it (by
// webhook-id and plant id, with the time of the first) and, on demand, answering 500 for a while, as a subscriber
// in trouble would.
import { Receiver } from '../harness/receiver';

export class ChaosReceiver {
  /** webhook-id → how many times it was acknowledged (more than once: a redelivery). */
  readonly acknowledged = new Map<string, number>();
  /** webhook-id → when each acknowledged send arrived (ms since epoch): to tell a second send's cause. */
  readonly arrivals = new Map<string, number[]>();
  /** plant id → when it was first acknowledged (ms since epoch). */
  readonly firstDelivered = new Map<number, number>();
  refused = 0;
  private failUntil = 0;
  private readonly rx = new Receiver();

  async listen(): Promise<string> {
    await this.rx.start();
    this.rx.behave('/hook', (r) => {
      if (r.at < this.failUntil) {
        this.refused++;
        return { status: 500, body: 'failing on purpose' };
      }
      const id = String(r.headers['webhook-id'] ?? '');
      this.acknowledged.set(id, (this.acknowledged.get(id) ?? 0) + 1);
      this.arrivals.set(id, [...(this.arrivals.get(id) ?? []), r.at]);
      try {
        const plant = JSON.parse(r.body) as { id: number };
        if (!this.firstDelivered.has(plant.id)) this.firstDelivered.set(plant.id, r.at);
      } catch {
        /* not a plant: counted by webhook-id only */
      }
      return { status: 204 };
    });
    return `${this.rx.url}/hook`;
  }

  /** Answers 500 to everything for `ms` from now. */
  fail(ms: number) {
    this.failUntil = Date.now() + ms;
  }

  close() {
    return this.rx.stop();
  }
}
