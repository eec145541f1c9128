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

  it('remembers a notify that came while nobody waited, so the wake-up is not lost', async () => {
    const sut = new DeliverySignal();
    sut.notify();
    const started = Date.now();
    await sut.wait(5000);
    expect(Date.now() - started).toBeLessThan(1000);
    const timedOut = await Promise.race([
      sut.wait(50).then(() => 'waited'),
      new Promise((r) => setTimeout(() => r('late'), 1000)),
    ]);
    expect(timedOut).toBe('waited');
  });

  it('resolves on timeout and forgets the waiter, so idle polling does not accumulate them', async () => {
    const sut = new DeliverySignal();
    for (let i = 0; i < 3; i++) await sut.wait(1);
    expect((sut as unknown as { waiters: unknown[] }).waiters).toHaveLength(0);
  });
});
