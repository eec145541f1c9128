import { DeliverySignal } from './delivery-signal';

describe(DeliverySignal.name, () => {
  it('wakes every waiter on notify, before their timeout', async () => {
    const sut = new DeliverySignal();
    const started = Date.now();
    const waits = [sut.wait(5000), sut.wait(5000)];
    sut.notify();
    await Promise.all(waits);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('resolves on timeout and forgets the waiter, so idle polling does not accumulate them', async () => {
    const sut = new DeliverySignal();
    for (let i = 0; i < 3; i++) await sut.wait(1);
    expect((sut as unknown as { waiters: unknown[] }).waiters).toHaveLength(0);
  });
});
