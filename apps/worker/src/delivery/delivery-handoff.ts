import { Injectable } from '@nestjs/common';
import { ClaimedDelivery, NO_LEASE, OutboxLease } from '@app/persistence';

/** What the dispatcher offers the consumer: room for fresh deliveries, and taking them. */
export interface HandoffTarget {
  room(): OutboxLease;
  /** `leftBehind`: deliveries written in the same batch but not leased, for the claim path to pick up. */
  accept(leased: ClaimedDelivery[], leftBehind: number): void;
}

/**
 * The consumer's line to the dispatcher in the same process. The consumer writes a batch's deliveries leased
 * to this worker, as many as the dispatcher has room for, and hands them over once they are stored, so a
 * fresh delivery goes out without a claim query and without waiting for the dispatcher to wake up. Without a
 * dispatcher attached nothing is leased: every delivery waits for a claim, as it would in another replica.
 */
@Injectable()
export class DeliveryHandoff {
  private target: HandoffTarget | null = null;

  attach(target: HandoffTarget) {
    this.target = target;
  }

  room(): OutboxLease {
    return this.target?.room() ?? NO_LEASE;
  }

  accept(leased: ClaimedDelivery[], leftBehind: number) {
    if (leased.length > 0 && !this.target) throw new Error('deliveries leased with no dispatcher to take them');
    this.target?.accept(leased, leftBehind);
  }
}
