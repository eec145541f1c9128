import { ClaimedDelivery } from '@app/delivery';

/**
 * Where a delivery this worker took on stands (docs/architecture.md, "A delivery's steps"). Only the dispatcher
 * moves a delivery, and only along NEXT: a move off that table is a bug, thrown rather than let a delivery be sent
 * twice or forgotten. Its lease covers every step before a final one.
 */
export type DeliveryStep =
  /** Claimed as a row, fanned out from its event, or handed over by the ingest stage: held under a lease. */
  | 'taken'
  /** Waiting for a sending slot of its subscriber. */
  | 'queued'
  /** On the wire to the receiver (or checked just before: lease, subscription). */
  | 'sending'
  /** Answered, or set aside unattempted; its outcome being written. */
  | 'recording'
  /** Final: the outcome is written (sent, to retry, failed for good, or waiting as a row). */
  | 'recorded'
  /** Final: released unsent, claimable again (its gate shut, over its share; at stop, a fan-out with its event). */
  | 'handed-back'
  /** Final: another claim took its lease; that claim sends it. */
  | 'lease-lost'
  /** Final: its subscription is no longer enabled. */
  | 'withdrawn'
  /** Final: its outcome could not be written; its lease lapses and it is sent again (at least once). */
  | 'unrecorded';

const NEXT: Record<DeliveryStep, readonly DeliveryStep[]> = {
  taken: ['queued', 'handed-back', 'recording'],
  queued: ['sending', 'handed-back', 'recording', 'lease-lost', 'withdrawn'],
  sending: ['recording', 'lease-lost', 'withdrawn', 'unrecorded'],
  recording: ['recorded', 'unrecorded'],
  recorded: [],
  'handed-back': [],
  'lease-lost': [],
  withdrawn: [],
  unrecorded: [],
};

export const isFinal = (step: DeliveryStep) => NEXT[step].length === 0;

/** The step of every delivery this worker holds, and how many are in each: the dispatcher's window. */
export class DeliverySteps {
  private readonly at = new Map<ClaimedDelivery, DeliveryStep>();
  private readonly counts = new Map<DeliveryStep, number>();

  /** `left`: called each time a delivery reaches a final step (room in the window may have freed). */
  constructor(private readonly left: () => void = () => undefined) {}

  take(d: ClaimedDelivery) {
    if (this.at.has(d)) throw new Error(`delivery ${d.id} taken twice`);
    this.set(d, 'taken');
  }

  move(d: ClaimedDelivery, to: DeliveryStep) {
    const from = this.at.get(d);
    if (from === undefined || !NEXT[from].includes(to))
      throw new Error(`delivery ${d.id}: no step from ${from ?? '(not held)'} to ${to}`);
    this.counts.set(from, this.count(from) - 1);
    if (isFinal(to)) {
      this.at.delete(d);
      this.left();
    } else this.set(d, to);
  }

  stepOf(d: ClaimedDelivery): DeliveryStep | undefined {
    return this.at.get(d);
  }

  count(step: DeliveryStep): number {
    return this.counts.get(step) ?? 0;
  }

  /** The steps the window counts, and how many are in each. */
  inWindow(): { sending: number; queued: number; recording: number } {
    return { sending: this.count('sending'), queued: this.count('queued'), recording: this.count('recording') };
  }

  /** Deliveries held in the window: queued, on the wire, or with an outcome being written. */
  held(): number {
    return this.count('queued') + this.count('sending') + this.count('recording');
  }

  private set(d: ClaimedDelivery, step: DeliveryStep) {
    this.at.set(d, step);
    this.counts.set(step, this.count(step) + 1);
  }
}
