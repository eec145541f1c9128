import { EventEmitter } from 'node:events';
import { PatchedRequestQueue } from './kafkajs-fixes';

// kafkajs's own RequestQueue, with the fix applied by importing it.
const RequestQueue = PatchedRequestQueue as unknown as new (o: object) => {
  throttledUntil: number;
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  destroy(): void;
};

const logger = { debug: () => undefined, warn: () => undefined, info: () => undefined, error: () => undefined };
const queue = () =>
  new RequestQueue({
    instrumentationEmitter: new EventEmitter(),
    maxInFlightRequests: 1,
    requestTimeout: 1000,
    enforceRequestTimeout: true,
    clientId: 'test',
    broker: 'localhost:9092',
    logger: { namespace: () => logger },
    isConnected: () => true,
  });

describe('kafkajs RequestQueue fix (tulios/kafkajs#1704)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('schedules no check when nothing is pending: no 1 ms timer loop, no negative delay', () => {
    const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
    const q = queue();
    q.checkPendingRequests(); // what every response does
    expect(q.throttleCheckTimeoutId).toBeNull();
    expect(setTimeoutSpy.mock.calls.filter(([, ms]) => ms !== undefined && ms <= 0)).toEqual([]);
    q.destroy();
  });

  it('still checks later while requests wait behind a throttle', () => {
    const q = queue();
    q.pending.push({});
    q.throttledUntil = Date.now() + 500;
    const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    const delay = setTimeoutSpy.mock.calls.at(-1)![1]!;
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(500);
    q.pending.length = 0;
    q.destroy();
  });
});
