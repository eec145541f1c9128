import { ClaimedDelivery, Outbox } from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { LeaseKeeper, RECORD_MARGIN_MS, RENEW_EVERY_MS } from './lease-keeper';
import { claimedDelivery } from './claimed-delivery.fixture-spec';

const NOW = 1_000_000;
const TIMEOUT_MS = 10_000;
/** Leases ending before this are due for renewal at NOW. */
const HORIZON = NOW + TIMEOUT_MS + RECORD_MARGIN_MS + 2 * RENEW_EVERY_MS;

const delivery = (id: string, until: number) =>
  claimedDelivery(id, { hasRow: true, lease: { token: `lease-of-${id}`, until } });

/** An outbox that renews every lease but those in `lost` until `until`, and remembers what it released. */
function setup() {
  const db = {
    lost: new Set<string>(),
    until: NOW + 99_000,
    fail: null as Error | null,
    stalled: null as Promise<void> | null,
  };
  const outbox: Pick<Outbox, 'renewLeases' | 'releaseLeases'> = {
    renewLeases: jest.fn(async (held: ClaimedDelivery[]) => {
      await db.stalled;
      if (db.fail) throw db.fail;
      return { renewed: new Set(held.map((d) => d.id).filter((id) => !db.lost.has(id))), until: db.until };
    }),
    releaseLeases: jest.fn(async () => undefined),
  };
  const sink = jest.fn();
  const keeper = new LeaseKeeper(outbox as Outbox, TIMEOUT_MS, new RateLimitedLog(sink));
  return { db, outbox, sink, keeper };
}

describe(LeaseKeeper.name, () => {
  it('leases for the timeout and 5 s more', () => {
    expect(setup().keeper.leaseMs).toBe(15_000);
  });

  it('lets a delivery be sent only if its lease outlasts the attempt and the record margin', () => {
    const { keeper } = setup();
    expect(keeper.lasts(delivery('d1', NOW + TIMEOUT_MS + RECORD_MARGIN_MS), NOW)).toBe(true);
    expect(keeper.lasts(delivery('d2', NOW + TIMEOUT_MS + RECORD_MARGIN_MS - 1), NOW)).toBe(false);
  });

  it('renews a lease its claim still holds, for leaseMs, and extends it', async () => {
    const { keeper, outbox } = setup();
    const d = delivery('d1', NOW);
    expect(await keeper.renew(d)).toBe(true);
    expect(d.lease.until).toBe(NOW + 99_000);
    expect(outbox.renewLeases).toHaveBeenCalledWith([d], 15_000);
  });

  it('answers false for a lease another claim took, leaving it as it was', async () => {
    const { keeper, db } = setup();
    db.lost.add('d1');
    const d = delivery('d1', NOW);
    expect(await keeper.renew(d)).toBe(false);
    expect(d.lease.until).toBe(NOW);
  });

  it('answers false, and says so, when the renewal fails', async () => {
    const { keeper, db, sink } = setup();
    db.fail = new Error('connection terminated');
    expect(await keeper.renew(delivery('d1', NOW))).toBe(false);
    expect(sink).toHaveBeenCalledWith(
      'warn',
      'renewing leases failed, not sending: connection terminated',
      expect.anything(),
    );
  });

  it('renews none, and answers null, when no queued lease is soon too short', async () => {
    const { keeper, outbox } = setup();
    expect(await keeper.renewSoonShort([delivery('d1', HORIZON)], NOW)).toBeNull();
    expect(await keeper.renewSoonShort([], NOW)).toBeNull();
    expect(outbox.renewLeases).not.toHaveBeenCalled();
  });

  it('renews in one batch only the leases soon too short, and returns those another claim took', async () => {
    const { keeper, outbox, db } = setup();
    const [kept, lost, later] = [delivery('d1', HORIZON - 1), delivery('d2', NOW), delivery('d3', HORIZON)];
    db.lost.add('d2');
    expect(await keeper.renewSoonShort([kept, lost, later], NOW)).toEqual([lost]);
    expect(outbox.renewLeases).toHaveBeenCalledTimes(1);
    expect(outbox.renewLeases).toHaveBeenCalledWith([kept, lost], 15_000);
    expect([kept.lease.until, lost.lease.until, later.lease.until]).toEqual([NOW + 99_000, NOW, HORIZON]);
  });

  it('runs one batch at a time: a call while one is under way renews nothing', async () => {
    const { keeper, outbox, db } = setup();
    let resume!: () => void;
    db.stalled = new Promise<void>((r) => (resume = r));
    const first = keeper.renewSoonShort([delivery('d1', NOW)], NOW);
    expect(await keeper.renewSoonShort([delivery('d2', NOW)], NOW)).toBeNull();
    resume();
    expect(await first).toEqual([]);
    expect(outbox.renewLeases).toHaveBeenCalledTimes(1);
    expect(await keeper.renewSoonShort([delivery('d3', NOW)], NOW)).toEqual([]);
    expect(outbox.renewLeases).toHaveBeenCalledTimes(2);
  });

  it('answers null, and says it will retry, when the batch fails', async () => {
    const { keeper, db, sink } = setup();
    db.fail = new Error('connection terminated');
    const d = delivery('d1', NOW);
    expect(await keeper.renewSoonShort([d], NOW)).toBeNull();
    expect(d.lease.until).toBe(NOW);
    expect(sink).toHaveBeenCalledWith('warn', 'renewing leases failed, will retry: connection terminated', {});
  });

  it('hands back nothing without a statement', async () => {
    const { keeper, outbox } = setup();
    await expect(keeper.handBack([])).resolves.toBeUndefined();
    expect(outbox.releaseLeases).not.toHaveBeenCalled();
  });

  it('hands back rows by id and lease token, and swallows a failure', async () => {
    const { keeper, outbox } = setup();
    await keeper.handBack([delivery('d1', NOW), delivery('d2', NOW)]);
    expect(outbox.releaseLeases).toHaveBeenCalledWith([
      { id: 'd1', token: 'lease-of-d1' },
      { id: 'd2', token: 'lease-of-d2' },
    ]);
    jest.mocked(outbox.releaseLeases).mockRejectedValueOnce(new Error('connection terminated'));
    await expect(keeper.handBack([delivery('d3', NOW)])).resolves.toBeUndefined();
  });
});
