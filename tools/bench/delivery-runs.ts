// bench:delivery's measured runs: subscribe, send webhooks at a rate, wait until every delivery arrived (or a broker
// took every message), unsubscribe; then latency from each 200 to its arrival or recorded ack, and CPU per delivery.
import { Client } from 'pg';
import { adminClient } from '../harness/admin';
import type { Receiver } from '../harness/receiver';
import { waitFor } from '../harness/wait';
import type { Target } from './destination-targets';
import { LoopMeter, loopMeter } from './event-loops';
import { ADMIN, cpuMeter, info, paced, sendWebhook, Stack } from './harness';

/** When each plant's deliveries reached the receiver (ms), from the requests it recorded since `from`. */
function arrivalsSince(rx: Receiver, from: number): Map<number, number[]> {
  const arrivals = new Map<number, number[]>();
  for (const r of rx.received.slice(from)) {
    const { id } = JSON.parse(r.body) as { id: number };
    arrivals.set(id, [...(arrivals.get(id) ?? []), r.at]);
  }
  return arrivals;
}

interface Run {
  subscribers: number;
  rate: number;
  count: number;
  nextId: () => number;
  path: string;
  waitMs: number;
  /** A broker destination (--kinds): every subscriber publishes to it, instead of a path of the receiver. */
  target?: Target;
}

/**
 * Subscribes `subscribers` endpoints of the receiver (or the broker `target`), sends `count` webhooks at `rate`,
 * waits (up to `waitMs`) until every delivery arrived, then unsubscribes. Returns when each plant id was accepted
 * (the 200), when each delivery arrived at the receiver, and the subscriptions.
 */
export async function deliveryRun(
  stack: Stack,
  rx: Receiver,
  { subscribers, rate, count, nextId, path, waitMs, target }: Run,
) {
  const admin = adminClient(stack.url, ADMIN);
  const subs: { id: string }[] = [];
  for (let i = 0; i < subscribers; i++)
    subs.push(await admin.subscribe({ url: target?.url ?? `${rx.url}/${path}${i}` }));
  const from = rx.received.length;
  const taken = target ? await target.count() : 0;
  const accepted = new Map<number, number>();
  await paced(rate, count, async () => {
    const id = nextId();
    // With several gateways, each takes every n-th webhook, as a load balancer would spread them.
    await sendWebhook(stack.gateways[id % stack.gateways.length].url, { id, name: 'Delivered', tag: 'bench' });
    accepted.set(id, Date.now());
  });
  const expected = count * subscribers;
  if (target) await brokerTook(target, taken + expected, waitMs);
  else await waitFor('every delivery', () => rx.received.length - from >= expected, waitMs, 250).catch(() => undefined);
  for (const sub of subs) await admin.call('DELETE', `/subscriptions/${sub.id}`);
  return { accepted, arrivals: arrivalsSince(rx, from), subscriptions: subs.map((sub) => sub.id) };
}

/**
 * Waits (up to `waitMs`) until the broker says it has taken `want` messages in all, asking it every 250 ms (as
 * the receiver is looked at): the worker and PostgreSQL are not asked while their CPU is metered. Where the count
 * may miss messages (MQTT's QoS 0 subscriber) the run also ends once the count stood still for 5 s, and says so.
 */
async function brokerTook(target: Target, want: number, waitMs: number) {
  const deadline = Date.now() + waitMs;
  let last = -1;
  let grew = Date.now();
  while (Date.now() < deadline) {
    const n = await target.count().catch(() => last);
    if (n >= want) return;
    if (n !== last) [last, grew] = [n, Date.now()];
    else if (!target.exact && Date.now() - grew > 5000) {
      info(`${target.kind}: the count stood at ${n} of ${want} for 5 s; the run ends (its CPU includes those 5 s)`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  info(`${target.kind}: not every message was taken within ${waitMs / 1000} s`);
}

/**
 * When each plant's deliveries to `subscriptions` were acked (ms): its succeeded attempt's start plus its latency,
 * as the worker recorded them (HTTP: the 2xx; a broker: its ack). Read after the run's CPU was metered.
 */
export async function ackedTimes(url: string, subscriptions: string[]): Promise<Map<number, number[]>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ plant_id: string; acked_ms: string }>(
      `SELECT plant_id, extract(epoch FROM (attempt_log -> -1 ->> 'attemptedAt')::timestamptz) * 1000
                        + (attempt_log -> -1 ->> 'latencyMs')::int AS acked_ms
       FROM all_deliveries WHERE subscription_id = ANY($1::uuid[]) AND status = 'succeeded'`,
      [subscriptions],
    );
    const times = new Map<number, number[]>();
    for (const r of rows) {
      const id = Number(r.plant_id);
      times.set(id, [...(times.get(id) ?? []), Number(r.acked_ms)]);
    }
    return times;
  } finally {
    await client.end();
  }
}

export interface Measured {
  latencies: number[];
  deliveredPerSecond: number;
  /** CPU seconds per part of the stack during the run. */
  cpu: Record<string, number> | null;
  cores: Record<string, number> | null;
  /** How busy each app's event loop was (event-loops.ts). */
  eventLoops: Awaited<ReturnType<LoopMeter['stop']>>;
  /** When each plant was accepted, when each of its deliveries got there (the latencies' ends), the subscriptions. */
  accepted: Map<number, number>;
  times: Map<number, number[]>;
  subscriptions: string[];
}

/** Latency (ms) from each plant's 200 to each time one of its deliveries got there, and those per second. */
export function timed(accepted: Map<number, number>, times: Map<number, number[]>) {
  const latencies: number[] = [];
  let first = Infinity;
  let last = 0;
  for (const [id, at] of accepted) {
    first = Math.min(first, at);
    for (const t of times.get(id) ?? []) {
      latencies.push(Math.max(0, t - at));
      last = Math.max(last, t);
    }
  }
  return { latencies, deliveredPerSecond: Math.round(latencies.length / Math.max(0.001, (last - first) / 1000)) };
}

/**
 * One measured run: `count` webhooks at `rate` to `subscribers` endpoints, latencies and CPU. To the receiver,
 * latency ends at its arrival; to a broker (`run.target`), at the ack the worker recorded (no receiver to see it).
 */
export async function measure(stack: Stack, rx: Receiver, run: Omit<Run, 'path' | 'waitMs'>): Promise<Measured> {
  // Each app once, by the label both meters print: its process, and where its /metrics is.
  const apps = [
    ...stack.gateways.map((g, i) => ({ label: `gateway${i || ''}`, pid: g.process.pid, metrics: g.metricsUrl })),
    ...stack.workers.map((w, i) => ({ label: `worker${i || ''}`, pid: w.process.pid, metrics: w.url })),
  ];
  const meter = cpuMeter(Object.fromEntries(apps.map((a) => [a.label, a.pid])));
  const loops = loopMeter(Object.fromEntries(apps.map((a) => [a.label, a.metrics])));
  const { accepted, arrivals, subscriptions } = await deliveryRun(stack, rx, { ...run, path: 's', waitMs: 120000 });
  const cpu = meter.cpuSeconds();
  const cores = meter.read();
  const eventLoops = await loops.stop();
  const times = run.target ? await ackedTimes(stack.env.DATABASE_URL, subscriptions) : arrivals;
  return { ...timed(accepted, times), cpu, cores, eventLoops, accepted, times, subscriptions };
}

/** Worker and PostgreSQL CPU per successful delivery (µs), summed over worker replicas. */
export function costPerDelivery(m: Measured) {
  if (!m.cpu || m.latencies.length === 0) return null;
  const sum = (prefix: string) =>
    Object.entries(m.cpu!)
      .filter(([k]) => k.startsWith(prefix))
      .reduce((n, [, v]) => n + v, 0);
  const us = (prefix: string) => Math.round((sum(prefix) * 1e6) / m.latencies.length);
  return {
    worker: us('worker'),
    postgresql: us('postgresql'),
    'of which background': us('postgresql ('),
    gateway: us('gateway'),
    kafka: us('kafka'),
  };
}
