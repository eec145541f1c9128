import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One registry per process, with Node's default metrics, labelled with the app name. */
export function createMetricsRegistry(app: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ app });
  collectDefaultMetrics({ register: registry });
  instruments(registry).counter(
    'plant_store_event_loop_busy_seconds_total',
    "Seconds the process's one JavaScript thread spent running code rather than waiting for I/O. Its rate is " +
      'the share of that thread in use: near 1, every request, answer and statement waits behind the others ' +
      '(the lag histograms show how long), and more of this process, not more slots, is what would help.',
    [],
    (c) => {
      c.reset();
      c.inc(performance.eventLoopUtilization().active / 1000);
    },
  );
  return registry;
}

/** Latency buckets in seconds, fine-grained below 100 ms where the targets are. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Declares instruments on one registry, a line each: `name` (Prometheus), `help` (what it counts, in words an
 * operator reads on a dashboard) and its labels; histograms take their buckets.
 */
export function instruments(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[] = [],
      /** Sets the counter from a running total kept elsewhere when it is scraped (the total only grows). */
      collect?: (counter: Counter<L>) => void,
    ) => new Counter<L>({ name, help, labelNames, registers, ...onScrape(collect) }),
    gauge: <L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[] = [],
      /** Sets the gauge when it is scraped, rather than on every change. */
      collect?: (gauge: Gauge<L>) => void,
    ) => new Gauge<L>({ name, help, labelNames, registers, ...onScrape(collect) }),
    histogram: <L extends string>(name: string, help: string, buckets: number[], labelNames: readonly L[] = []) =>
      new Histogram<L>({ name, help, buckets, labelNames, registers }),
  };
}

/** prom-client's `collect` option, which it calls with the metric as `this` on each scrape. */
function onScrape<M>(collect?: (metric: M) => void): { collect?: (this: M) => void } {
  return collect
    ? {
        collect(this: M) {
          collect(this);
        },
      }
    : {};
}
