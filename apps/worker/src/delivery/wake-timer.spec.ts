import { WakeTimer, WakeTimers } from './wake-timer';

describe(WakeTimer.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('wakes once, when the time asked for has come', () => {
    const wake = jest.fn();
    new WakeTimer(wake).in(100);
    jest.advanceTimersByTime(99);
    expect(wake).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(wake).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(10_000);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('wakes at the earliest time asked for, once', () => {
    const wake = jest.fn();
    const timer = new WakeTimer(wake);
    timer.in(500);
    timer.in(100);
    jest.advanceTimersByTime(100);
    expect(wake).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('does not postpone a wake-up for a later request', () => {
    const wake = jest.fn();
    const timer = new WakeTimer(wake);
    timer.in(100);
    jest.advanceTimersByTime(50);
    timer.in(500);
    jest.advanceTimersByTime(50);
    expect(wake).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('takes a new request once it has woken', () => {
    const wake = jest.fn();
    const timer = new WakeTimer(wake);
    timer.in(100);
    jest.advanceTimersByTime(100);
    timer.in(300);
    jest.advanceTimersByTime(299);
    expect(wake).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1);
    expect(wake).toHaveBeenCalledTimes(2);
  });

  it('cancels the wake-up on stop, and takes a new request after', () => {
    const wake = jest.fn();
    const timer = new WakeTimer(wake);
    timer.in(100);
    timer.stop();
    jest.advanceTimersByTime(1000);
    expect(wake).not.toHaveBeenCalled();
    timer.in(200);
    jest.advanceTimersByTime(200);
    expect(wake).toHaveBeenCalledTimes(1);
  });
});

describe(WakeTimers.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('wakes each key at its own time, naming it', () => {
    const wake = jest.fn();
    const timers = new WakeTimers<string>(wake);
    const now = Date.now();
    timers.at('a', now + 100, now);
    timers.at('b', now + 300, now);
    jest.advanceTimersByTime(105);
    expect(wake.mock.calls).toEqual([['a']]);
    jest.advanceTimersByTime(200);
    expect(wake.mock.calls).toEqual([['a'], ['b']]);
  });

  it("moves a key's wake-up when asked again, later or earlier", () => {
    const wake = jest.fn();
    const timers = new WakeTimers<string>(wake);
    const now = Date.now();
    timers.at('a', now + 100, now);
    timers.at('a', now + 1000, now);
    jest.advanceTimersByTime(500);
    expect(wake).not.toHaveBeenCalled();
    timers.at('a', Date.now() + 10);
    jest.advanceTimersByTime(15);
    expect(wake).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(5000);
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('cancels every wake-up on stop', () => {
    const wake = jest.fn();
    const timers = new WakeTimers<string>(wake);
    timers.at('a', Date.now() + 100);
    timers.at('b', Date.now() + 200);
    timers.stop();
    jest.advanceTimersByTime(1000);
    expect(wake).not.toHaveBeenCalled();
  });
});
