// How busy each app's one JavaScript thread was during a measured run, from its
// plant_store_event_loop_busy_seconds_total (Node's event-loop utilisation), sampled every second: the mean over
// the run and the busiest second. A process whose busiest seconds are near 100 % is what limits the run, whatever
// its CPU share averaged over the whole run says (that includes the seconds before and after the flow).
import { metricSum } from '../harness/metrics';

const METRIC = 'plant_store_event_loop_busy_seconds_total';

export interface LoopMeter {
  /** Stops sampling; % of the run each app's thread was busy, on average and in its busiest second. */
  stop(): Promise<Record<string, { 'mean %': number; 'busiest second %': number }>>;
}

/** `apps`: each app's label and the base URL of its /metrics. */
export function loopMeter(apps: Record<string, string>): LoopMeter {
  const read = async () =>
    Object.fromEntries(
      await Promise.all(
        Object.entries(apps).map(
          async ([label, url]) => [label, await metricSum(url, METRIC).catch(() => NaN)] as const,
        ),
      ),
    );
  const samples: { at: number; busy: Record<string, number> }[] = [];
  // Timed at the middle of the scrape (the counter is read somewhere within it); a second's share is still
  // clamped to 100 %, the jitter of a scrape under load being a few ms either way.
  const sample = async () => {
    const sent = performance.now();
    const busy = await read();
    samples.push({ at: (sent + performance.now()) / 2, busy });
  };
  // Every scrape under way is awaited at the end, and the samples put in time order: under load a scrape can
  // finish after the next one started.
  const pending = [sample()];
  const timer = setInterval(() => pending.push(sample()), 1000);
  return {
    async stop() {
      clearInterval(timer);
      pending.push(sample());
      await Promise.all(pending);
      samples.sort((a, b) => a.at - b.at);
      const out: Record<string, { 'mean %': number; 'busiest second %': number }> = {};
      for (const label of Object.keys(apps)) {
        const pct = (a: (typeof samples)[number], b: (typeof samples)[number]) =>
          (100 * (b.busy[label] - a.busy[label])) / ((b.at - a.at) / 1000);
        let busiest = 0;
        for (let i = 1; i < samples.length; i++)
          busiest = Math.max(busiest, Math.min(100, pct(samples[i - 1], samples[i])));
        const mean = pct(samples[0], samples[samples.length - 1]);
        out[label] = { 'mean %': Math.round(mean), 'busiest second %': Math.round(busiest) };
      }
      return out;
    },
  };
}
