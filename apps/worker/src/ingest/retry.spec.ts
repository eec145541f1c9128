import { BatchAbandoned, retryTransient } from './retry';

describe(retryTransient.name, () => {
  const ctl = (overrides = {}) => ({
    heartbeat: jest.fn(async () => undefined),
    shouldContinue: jest.fn(() => true),
    sleep: jest.fn(async () => undefined),
    onRetry: jest.fn(),
    ...overrides,
  });

  it('retries a transient failure until it succeeds, heartbeating while it waits', async () => {
    const c = ctl();
    let calls = 0;
    const fn = async () => {
      if (++calls < 4) throw new Error('connection refused');
      return 'stored';
    };
    await expect(retryTransient(fn, c)).resolves.toBe('stored');
    expect(calls).toBe(4);
    expect(c.onRetry.mock.calls.map((call) => call[2])).toEqual([200, 400, 800]);
    expect(c.heartbeat).toHaveBeenCalled();
  });

  it('caps the backoff at 5 s', async () => {
    const c = ctl();
    let calls = 0;
    await retryTransient(async () => {
      if (++calls < 10) throw new Error('down');
    }, c);
    expect(Math.max(...c.onRetry.mock.calls.map((call) => call[2]))).toBe(5000);
  });

  it('abandons the batch when the consumer stops while waiting', async () => {
    let running = true;
    const c = ctl({ shouldContinue: () => running, sleep: async () => void (running = false) });
    await expect(retryTransient(async () => Promise.reject(new Error('down')), c)).rejects.toBeInstanceOf(
      BatchAbandoned,
    );
  });
});
