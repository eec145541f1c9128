import { collectDefaultMetrics, Registry } from 'prom-client';

/** One registry per process, with Node's default metrics, labelled with the app name. */
export function createMetricsRegistry(app: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ app });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Latency buckets in seconds, fine-grained below 100 ms where the targets are. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
