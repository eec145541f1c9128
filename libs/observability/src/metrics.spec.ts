import { performance } from 'node:perf_hooks';
import { createMetricsRegistry } from './metrics';

describe('createMetricsRegistry', () => {
  const busySeconds = async (registry: ReturnType<typeof createMetricsRegistry>) => {
    const metric = await registry.getSingleMetric('plant_store_event_loop_busy_seconds_total')!.get();
    return metric.values[0].value;
  };
  const activeSeconds = () => performance.eventLoopUtilization().active / 1000;

  it("counts the seconds the event loop ran code: Node's event-loop utilisation, not the wall clock", async () => {
    const registry = createMetricsRegistry('test');
    const before = await busySeconds(registry);
    const spinUntil = performance.now() + 100;
    while (performance.now() < spinUntil); // the thread busy for 100 ms
    expect((await busySeconds(registry)) - before).toBeGreaterThanOrEqual(0.09);

    // Waiting is not counted. Asserted by bracketing the counter with Node's own figure rather than by timing an
    // idle wait: on a loaded machine (the test lanes run beside each other) a wait's wall time says nothing.
    await new Promise((r) => setTimeout(r, 50));
    const low = activeSeconds();
    const counted = await busySeconds(registry);
    const high = activeSeconds();
    expect(counted).toBeGreaterThanOrEqual(low);
    expect(counted).toBeLessThanOrEqual(high);
    expect(high).toBeLessThan(process.uptime()); // the loop waited some of its life, and that is left out
  });
});
