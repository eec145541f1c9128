import { AttemptRecord, ClaimedDelivery, Outbox } from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { OutcomeRecorder } from './outcome-recorder';
import { claimedDelivery } from './claimed-delivery.fixture-spec';

const delivery = (id: string, leaseMs = 60_000) =>
  claimedDelivery(id, { hasRow: true, lease: { token: `lease-of-${id}`, until: Date.now() + leaseMs } });

const answered = (d: ClaimedDelivery): AttemptRecord => ({
  delivery: d,
  attempt: {
    attemptedAt: '2025-01-01T00:00:00.000Z',
    status: 500,
    latencyMs: 12,
    error: null,
    responseBody: 'a reply too long to store',
  },
  outcome: { kind: 'retry', delayMs: 1000 },
});

const dbError = (message: string, code: string) => Object.assign(new Error(message), { code });
const unavailable = () => dbError('terminating connection due to administrator command', '57P01');

/** A recorder over an outbox whose record() does what `write` says; the records of each call, apart. */
function setup(write: (records: AttemptRecord[]) => Promise<void>) {
  const calls: AttemptRecord[][] = [];
  const outbox: Pick<Outbox, 'record'> = {
    record: async (records) => {
      calls.push(records);
      return write(records);
    },
  };
  const sink = jest.fn();
  return { calls, sink, recorder: new OutcomeRecorder(outbox as Outbox, new RateLimitedLog(sink)) };
}

/** How the record ends, once the timers (linger, retry waits) have run: 'written', or the error thrown. */
const settle = async (p: Promise<void>) => {
  const outcome = p.then(
    () => 'written',
    (err: Error) => err,
  );
  await jest.advanceTimersByTimeAsync(60_000);
  return outcome;
};

describe(OutcomeRecorder.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes an outcome through the outbox', async () => {
    const { recorder, calls } = setup(async () => undefined);
    const record = answered(delivery('d1'));
    expect(await settle(recorder.record(record))).toBe('written');
    expect(calls).toEqual([[record]]);
  });

  it.each([
    ['22001', 'value too long for type character varying(4096)'],
    ['23514', 'new row violates check constraint "attempt_reply"'],
  ])(
    'writes a record refused for its data (%s) again without the reply, the refusal as its error',
    async (code, message) => {
      const { recorder, calls } = setup(async (records) => {
        if (records.some((r) => r.attempt?.responseBody !== null)) throw dbError(message, code);
      });
      const record = answered(delivery('d1'));
      expect(await settle(recorder.record(record))).toBe('written');
      expect(calls).toHaveLength(2);
      expect(calls[1]).toEqual([
        {
          ...record,
          attempt: {
            ...record.attempt,
            responseBody: null,
            error: `the attempt's record was refused by the database (${message}); its reply is not kept`,
          },
        },
      ]);
    },
  );

  it('throws a refusal for the data of an outcome not attempted, as there is no reply to leave out', async () => {
    const refused = dbError('invalid byte sequence for encoding "UTF8": 0x00', '22021');
    const { recorder, calls } = setup(async () => Promise.reject(refused));
    expect(await settle(recorder.record({ ...answered(delivery('d1')), attempt: null }))).toBe(refused);
    expect(calls).toHaveLength(1);
  });

  it('throws at once an error that is neither the data nor the database being away', async () => {
    const bug = dbError('column "nope" does not exist', '42703');
    const { recorder, calls } = setup(async () => Promise.reject(bug));
    expect(await settle(recorder.record(answered(delivery('d1'))))).toBe(bug);
    expect(calls).toHaveLength(1);
  });

  it('retries while the database is unavailable, and writes the outcome once it is back', async () => {
    let failures = 2;
    const { recorder, calls, sink } = setup(async () => {
      if (failures-- > 0) throw unavailable();
    });
    expect(await settle(recorder.record(answered(delivery('d1'))))).toBe('written');
    expect(calls).toHaveLength(3);
    expect(sink).toHaveBeenCalledWith(
      'warn',
      'recording outcomes failed, retrying: terminating connection due to administrator command',
      {},
    );
  });

  it('gives up, throwing, once the next try would come too late for the lease', async () => {
    const down = unavailable();
    const { recorder, calls } = setup(async () => Promise.reject(down));
    // The lease leaves 700 ms beyond the 1 s margin: tries at ~10 ms and ~220 ms wait 200 and 400 ms; the third,
    // at ~630 ms, would wait 800 ms more, past it.
    expect(await settle(recorder.record(answered(delivery('d1', 1700))))).toBe(down);
    expect(calls).toHaveLength(3);
  });

  it('does not retry at all when the lease is too short for one wait', async () => {
    const down = unavailable();
    const { recorder, calls } = setup(async () => Promise.reject(down));
    expect(await settle(recorder.record(answered(delivery('d1', 1100))))).toBe(down);
    expect(calls).toHaveLength(1);
  });
});
