/**
 * Fixes to kafkajs 2.2.4 (unmaintained: its last release is from 2023) applied on our side of the port, at load,
 * by every module that imports `@app/kafka`. Each names the upstream issue; `kafkajs` is pinned to the exact
 * version they were written against, and a different version refuses to start until someone reviews them.
 *
 * RequestQueue.scheduleCheckPendingRequests (tulios/kafkajs#1704, #1556, #1751): after every response it
 * schedules a check of the pending queue at `throttledUntil - Date.now()`, which is about -1.8e12 ms when there
 * is no throttle (`throttledUntil` starts at -1) and nothing pending. Node clamps the delay to 1 ms (Node 24
 * also prints `TimeoutNegativeWarning: -1795734656980 is a negative number`), the check finds nothing and
 * schedules itself again: a 1 ms timer loop on every broker connection for the life of the process, burning CPU
 * on an idle client. A check is needed only while requests wait (push() schedules one when it queues).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { version } = require('kafkajs/package.json') as { version: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue') as RequestQueueClass;

/** The value kafkajs uses when throttled by nothing but its in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;
export const KAFKAJS_VERSION_FIXED = '2.2.4';

interface RequestQueueLike {
  throttledUntil: number;
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}
type RequestQueueClass = { prototype: RequestQueueLike };

if (version !== KAFKAJS_VERSION_FIXED)
  throw new Error(
    `kafkajs ${version} is installed, but libs/kafka/src/kafkajs-fixes.ts patches ${KAFKAJS_VERSION_FIXED}: ` +
      'review each fix against the new version (it may be fixed upstream, or moved), then update the pin',
  );

RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const throttled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    throttled > 0 ? throttled : CHECK_PENDING_REQUESTS_INTERVAL,
  );
};

export { RequestQueue as PatchedRequestQueue };
