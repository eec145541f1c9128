import { Logger } from '@nestjs/common';
import { DeliveryDispatcher } from './delivery-dispatcher.service';
import { delivery, ok, settle, setup, until } from './delivery-dispatcher.fixtures-spec';
import { SendResult } from './delivery-sender';

// The dispatcher's leases: renewed while a delivery waits for a slot, never sent once another claim holds it.
describe(`${DeliveryDispatcher.name}: leases`, () => {
  it('renews the lease of a delivery that waited too long for a slot, and does not send one whose lease was lost', async () => {
    // Lease 6 s; an attempt takes up to 1 s: a delivery is sent at once only with 1 s + 2 s of its lease left.
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { sut, sent, recorded, released, mocks, db, start } = setup({ DELIVERY_TIMEOUT_MS: '1000' });
    const soon = Date.now() + 1500;
    db.lost.add('lease-of-e-lost');
    mocks.claimDue.mockResolvedValueOnce({
      claimed: [delivery('row', 's4', 'e-row', true, { until: soon })],
      more: false,
    });
    start(
      delivery('fresh', 's1', 'e-fresh'),
      delivery('waited', 's2', 'e-waited', false, { until: soon }),
      delivery('lost', 's3', 'e-lost', false, { until: soon }),
    );
    await until('three outcomes written', () => recorded().length === 3);
    await settle();
    expect(sent.sort()).toEqual(['fresh', 'row', 'waited']);
    expect(
      recorded()
        .map((r) => r.delivery.id)
        .sort(),
    ).toEqual(['fresh', 'row', 'waited']);
    // Only those short of lease were renewed, and each now holds it for another 6 s.
    const renewedIds = mocks.renewLeases.mock.calls.flatMap(([held]) => held.map((d) => d.id));
    expect(renewedIds.sort()).toEqual(['lost', 'row', 'waited']);
    expect(mocks.renewLeases.mock.calls[0][1]).toBe(6000);
    const waited = recorded().find((r) => r.delivery.id === 'waited')!;
    expect(waited.delivery.lease.until).toBeGreaterThan(Date.now() + 5000);
    // The lost one's event is not held here any more: nothing of it to hand back.
    await sut.onModuleDestroy();
    expect(released.events).toEqual([]);
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringMatching(/^delivery lost .* not sent/)]);
    warn.mockRestore();
  });

  it('renews the leases of deliveries waiting in its queue before they lapse; drops one another claim took', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { sut, sent, mocks, db, start, hold } = setup({ DELIVERY_TIMEOUT_MS: '1000', DELIVERY_CONCURRENCY: '1' });
    let answer!: (r: SendResult) => void;
    hold((d) => (d.id === 'busy' ? new Promise<SendResult>((r) => (answer = r)) : Promise.resolve(ok)));
    db.lost.add('lease-of-e-taken');
    start(
      delivery('busy', 's1', 'e-busy'),
      delivery('kept', 's2', 'e-kept', false, { until: Date.now() + 4500 }),
      delivery('taken', 's3', 'e-taken', false, { until: Date.now() + 4500 }),
    );
    await until('the queued leases renewed', () => mocks.renewLeases.mock.calls.length > 0, 3000);
    expect(mocks.renewLeases.mock.calls[0][0].map((d) => d.id).sort()).toEqual(['kept', 'taken']);
    answer(ok); // the slot frees: only the one still held is sent
    await until('kept sent', () => sent.includes('kept'));
    await settle();
    expect(sent).toEqual(['busy', 'kept']);
    await sut.onModuleDestroy();
    warn.mockRestore();
  });

  it('does not send what it cannot renew while the database is away', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const { inbox, sent, recorded, mocks } = setup({ DELIVERY_TIMEOUT_MS: '1000' });
      mocks.renewLeases.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      inbox.accept([delivery('a', 's1', 'e1', false, { until: Date.now() + 100 })], { events: 0, rowsFor: [] });
      await until('the renewal tried', () => mocks.renewLeases.mock.calls.length === 1);
      await settle();
      expect(sent).toEqual([]);
      expect(recorded()).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('keeps counting an event fanned out again under a new lease apart from the one it lost', async () => {
    const { inbox, recorded } = setup();
    inbox.accept([delivery('old', 's1', 'e1', false, { token: 'first' })], { events: 0, rowsFor: [] });
    inbox.accept(
      [
        delivery('new-a', 's1', 'e1', false, { token: 'second' }),
        delivery('new-b', 's2', 'e1', false, { token: 'second' }),
      ],
      { events: 0, rowsFor: [] },
    );
    await until('three outcomes written', () => recorded().length === 3);
    const completes = Object.fromEntries(recorded().map((r) => [r.delivery.id, r.completes]));
    // The old lease's delivery completes nothing; the new lease's last answered carries its two subscribers.
    expect(completes.old).toBeUndefined();
    expect([completes['new-a'], completes['new-b']].filter(Boolean)).toEqual([['s1', 's2']]);
  });
});
