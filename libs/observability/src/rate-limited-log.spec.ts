import pino from 'pino';
import { pinoSink, RateLimitedLog } from './rate-limited-log';

describe(RateLimitedLog.name, () => {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });

  beforeEach(() => (lines.length = 0));

  it('lets one line per key through per window, then says how many it held back', () => {
    const log = new RateLimitedLog(pinoSink(logger), 10_000);
    for (let i = 0; i < 50; i++) log.log('warn', 'sub-a', {}, 'delivery failed', 1000 + i);
    log.log('warn', 'sub-b', {}, 'delivery failed', 1100);
    log.log('warn', 'sub-a', {}, 'delivery failed', 12_000);
    expect(lines).toEqual([
      'delivery failed',
      'delivery failed',
      'delivery failed (and 49 more like it in the last 10s)',
    ]);
  });

  it('remembers a bounded number of keys', () => {
    const log = new RateLimitedLog(pinoSink(logger), 10_000);
    for (let i = 0; i < 5000; i++) log.log('warn', `key-${i}`, {}, 'x', 1000);
    expect((log as unknown as { seen: { size: number } }).seen.size).toBeLessThanOrEqual(1000);
  });
});
