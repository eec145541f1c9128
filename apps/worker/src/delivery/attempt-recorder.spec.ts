import { AttemptRecord } from '@app/persistence';
import { AttemptRecorder } from './attempt-recorder';

const record = (id: string): AttemptRecord => ({
  deliveryId: id,
  attempt: { attemptedAt: new Date(0).toISOString(), status: 200, latencyMs: 1, error: null, responseBody: null },
  outcome: { kind: 'succeeded' },
});

describe(AttemptRecorder.name, () => {
  it('writes records that arrive during a write together in the next one', async () => {
    const writes: string[][] = [];
    let release!: () => void;
    const repo = {
      recordAttempts: jest.fn(async (records: AttemptRecord[]) => {
        writes.push(records.map((r) => r.deliveryId));
        if (writes.length === 1) await new Promise<void>((r) => (release = r));
      }),
    };
    const sut = new AttemptRecorder(repo);
    const first = sut.record(record('a'));
    const later = [sut.record(record('b')), sut.record(record('c'))];
    await new Promise((r) => setImmediate(r));
    release();
    await Promise.all([first, ...later]);
    expect(writes).toEqual([['a'], ['b', 'c']]);
  });

  it('rejects every record of a failed write, so their leases expire and they are sent again', async () => {
    const sut = new AttemptRecorder({ recordAttempts: async () => Promise.reject(new Error('db down')) });
    await expect(sut.record(record('a'))).rejects.toThrow('db down');
  });
});
