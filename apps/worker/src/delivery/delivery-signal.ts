import { Injectable } from '@nestjs/common';

/** Wakes the dispatcher's loop as soon as there is work (fresh deliveries, freed room) instead of at its next poll. */
@Injectable()
export class DeliverySignal {
  private waiters: (() => void)[] = [];
  /** A notify that came while nobody was waiting (the dispatcher was busy claiming): the next wait returns at once. */
  private pending = false;

  notify() {
    if (this.waiters.length === 0) {
      this.pending = true;
      return;
    }
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  /**
   * Resolves on the next notify() (or one missed since the last wait) or after `ms`, whichever comes first:
   * true when notified, false when the time ran out.
   */
  wait(ms: number): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter); // an idle poll must not pile up waiters
        resolve(false);
      }, ms);
      this.waiters.push(waiter);
    });
  }
}
