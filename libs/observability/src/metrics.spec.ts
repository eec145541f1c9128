import { createMetricsRegistry } from './metrics';

describe('createMetricsRegistry', () => {
  const busySeconds = async (registry: ReturnType<typeof createMetricsRegistry>) => {
    const metric = await registry.getSingleMetric('plant_store_event_loop_busy_seconds_total')!.get();
    return metric.values[0].value;
  };

  it('counts the seconds the event loop ran code, and not the seconds it waited', async () => {
    const registry = createMetricsRegistry('test');
    const before = await busySeconds(registry);
    const spinUntil = performance.now() + 100;
    while (performance.now() < spinUntil); // the thread busy for 100 ms
    const afterBusy = await busySeconds(registry);
    await new Promise((r) => setTimeout(r, 200)); // and idle for 200
    const afterIdle = await busySeconds(registry);
    expect(afterBusy - before).toBeGreaterThanOrEqual(0.09);
    expect(afterIdle - afterBusy).toBeLessThan(0.1);
  });
});
