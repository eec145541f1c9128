import { Injectable } from '@nestjs/common';

/** Wakes the dispatcher as soon as the consumer has written deliveries, instead of waiting for its next poll. */
@Injectable()
export class DeliverySignal {
  private waiters: (() => void)[] = [];

  notify() {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  /** Resolves on the next notify() or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter); // an idle poll must not pile up waiters
        resolve();
      }, ms);
      this.waiters.push(waiter);
    });
  }
}
