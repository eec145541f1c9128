import { RoomHost } from './room-waits';
import { SendQueue } from './send-queue';
import { SubscriberGates } from './subscriber-gates';

/**
 * What ingest's waits for room (RoomWaits) see of this worker: the window's free room, each subscriber's share of
 * the send queue, and its gate. A subscriber whose gate is shut is never "full": its deliveries become rows anyway,
 * so a write need not wait for it. One whose own rate limit could not give it half its share of the slots within a
 * hand-over wait is not waited for either (it would hold every write to it for the whole wait).
 */
export function roomHostOf(
  queue: SendQueue,
  gates: SubscriberGates,
  opts: { window: number; free: () => number; handoverWaitMs: number; judgedSlow: RoomHost['judgedSlow'] },
): RoomHost {
  return {
    free: opts.free,
    full: (id) => queue.isFull(id) && !gates.shut(id),
    rooms: () => {
      const share = queue.windowShare();
      return (id) => queue.roomOf(id, share);
    },
    answeredBy: (id) => queue.answeredBy(id),
    fewAnswers: () => queue.fairShare() / 2,
    window: opts.window,
    heldByItsRate: (id) => {
      const rate = gates.rateOf(id);
      return rate !== null && (rate * opts.handoverWaitMs) / 1000 < queue.fairShare() / 2;
    },
    judgedSlow: opts.judgedSlow,
  };
}

/** Left out of claims and fan-outs: a full queue (one subscriber cannot hog a claim), a shut gate (paused…). */
export function leftOutOf(queue: SendQueue, gates: SubscriberGates): { full: string[]; shut: string[] } {
  const shut = gates.excluded();
  return { full: queue.full().filter((id) => !shut.includes(id)), shut };
}
