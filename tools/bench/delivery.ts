#!/usr/bin/env node
// npm run bench:delivery — outgoing New Plant webhooks on the real stack with a local receiver: the latency
// from the gateway's 200 to the receiver getting the request, p50/p95/p99, at a fixed webhook rate with 1
// subscriber and again with 10. Baseline in the same run: a direct POST to the same receiver (the floor of
// one loopback HTTP request on this machine).
// Also: CPU per successful delivery (worker, PostgreSQL) against the floor of the HTTP client alone, measured in
// the same run; each process's peak RSS; with --step, the highest rate to 10 subscribers whose p95 stays within
// 100 ms, then that rate again after the overload; with --workers 2 --gateways 2, the scale-out.
// With --slow-subscriber: only the slow-subscriber scenario (docs/delivery.md, flow control): 10 fast receivers,
// then 9 fast and 1 that takes 2 s per request, at the same load; the fast ones' p95 both ways, and whether every
// delivery to the slow one arrived.
// With --kinds http,kafka,amqp,nats,mqtt,redis (default: http alone, and no table of kinds): the same measurement
// with the subscribers pointed at each kind's destination in turn (a topic, queue, stream or key of its own on the
// local brokers, removed after), and a table of kinds: delivered/s, latency to the ack the worker recorded, CPU
// per delivery against that kind's floor (the same client code publishing alone, as the undici floor is to HTTP).
// Options: --rate 1000 --seconds 10 --subscribers 1,10 --step [--step-from 200 --step-to 1200 --step-by 100]
//          --workers 1 --gateways 1 --no-build --slow-subscriber [--slow-ms 2000] --kinds http
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { BrokerKind } from '@app/delivery';
import { adminClient } from '../support/admin';
import { localBrokers, LocalBrokers } from '../support/brokers';
import { metricSum } from '../support/metrics';
import { Receiver } from '../support/receiver';
import { waitFor } from '../support/wait';
import { createTarget, Kind, KINDS, removeTargetsOnInterrupt, Target } from './destination-targets';
import {
  ADMIN,
  arg,
  cpuMeter,
  histogramPercentiles,
  info,
  listArg,
  paced,
  printPeakRss,
  percentiles,
  runBench,
  scrapeHistogram,
  sendWebhook,
  Stack,
  startStack,
  step,
  table,
} from './harness';

/** The statements PostgreSQL spent most time on (PG_STAT_STATEMENTS=1). */
async function printStatementStats(url: string) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const { rows } = await client.query(
      `SELECT calls, round(total_exec_time)::int AS total_ms, round(mean_exec_time::numeric, 2) AS mean_ms,
              round(total_plan_time)::int AS plan_ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query
       FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 8`,
    );
    console.log('\nPostgreSQL statements by total time:');
    table(rows);
  } finally {
    await client.end();
  }
}

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
async function deliveryRun(
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
async function ackedTimes(url: string, subscriptions: string[]): Promise<Map<number, number[]>> {
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

/**
 * The floor: a client library alone sending a delivery-sized request to `url`, in a process of its own. HTTP
 * (undici, node:http) to the receiver; a broker kind (--kinds) publishes to its destination.
 */
function clientFloor(
  url: string,
  transport: 'undici' | 'node-http' | BrokerKind,
): Promise<{ usPerRequest: number; perSecond: number }> {
  const child = fork(path.join(__dirname, 'http-floor.ts'), {
    env: {
      ...process.env,
      FLOOR_URL: url,
      FLOOR_TRANSPORT: transport,
      FLOOR_BODY: JSON.stringify({ id: 6000000000000, name: 'Delivered', tag: 'bench' }),
      FLOOR_HEADERS: JSON.stringify({
        'content-type': 'application/json',
        'user-agent': 'PlantStore-Webhooks/1.0 (+https://plant.store)',
        'webhook-id': '8f9c4a9e-2b7c-5d1e-9a3f-0c6b8e2d4f10',
        'webhook-timestamp': '1795410540',
        'webhook-signature': 'v1,HtJ8quTZ+b71QHCvTkXcQ3kgBQk8NFM36przwZDFBvA=',
        'plant-store-hops': '1',
        'plant-store-origin': '8f9c4a9e-2b7c-5d1e-9a3f-0c6b8e2d4f10',
      }),
    },
    execArgv: ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => {
      resolve(m as { usPerRequest: number; perSecond: number });
      child.kill(); // measured: a client library's timer left behind must not keep it running
    });
    child.once('exit', (code) => code !== 0 && reject(new Error(`http-floor exited with ${code}`)));
  });
}

interface Measured {
  latencies: number[];
  deliveredPerSecond: number;
  /** CPU seconds per part of the stack during the run. */
  cpu: Record<string, number> | null;
  cores: Record<string, number> | null;
  /** When each plant was accepted, when each of its deliveries got there (the latencies' ends), the subscriptions. */
  accepted: Map<number, number>;
  times: Map<number, number[]>;
  subscriptions: string[];
}

/** Latency (ms) from each plant's 200 to each time one of its deliveries got there, and those per second. */
function timed(accepted: Map<number, number>, times: Map<number, number[]>) {
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
async function measure(stack: Stack, rx: Receiver, run: Omit<Run, 'path' | 'waitMs'>): Promise<Measured> {
  const pids = Object.fromEntries([
    ...stack.gateways.map((g, i) => [`gateway${i || ''}`, g.process.pid]),
    ...stack.workers.map((w, i) => [`worker${i || ''}`, w.process.pid]),
  ]);
  const meter = cpuMeter(pids);
  const { accepted, arrivals, subscriptions } = await deliveryRun(stack, rx, { ...run, path: 's', waitMs: 120000 });
  const cpu = meter.cpuSeconds();
  const cores = meter.read();
  const times = run.target ? await ackedTimes(stack.env.DATABASE_URL, subscriptions) : arrivals;
  return { ...timed(accepted, times), cpu, cores, accepted, times, subscriptions };
}

/** Worker and PostgreSQL CPU per successful delivery (µs), summed over worker replicas. */
function costPerDelivery(m: Measured) {
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

/**
 * 9 fast receivers and one taking `slowMs` per request, against 10 fast ones, at the same webhook rate: the fast
 * ones' latency (gateway 200 -> receiver) both ways, and how long the slow one took to get all of its deliveries.
 */
async function slowSubscriberScenario(stack: Stack, rx: Receiver, rate: number, seconds: number, nextId: () => number) {
  const slowMs = arg('slow-ms', 2000);
  const count = rate * seconds;
  const admin = adminClient(stack.url, ADMIN);
  const rows: Record<string, object> = {};
  let slowSummary = '';
  for (const withSlow of [false, true]) {
    const tag = withSlow ? 'm' : 'n';
    const paths = Array.from({ length: 10 }, (_, i) => `/${tag}${i}`);
    const slowPath = withSlow ? paths[9] : null;
    if (slowPath) rx.behave(slowPath, () => ({ status: 204, delayMs: slowMs }));
    const subs: { id: string }[] = [];
    for (const p of paths) subs.push(await admin.subscribe({ url: `${rx.url}${p}` }));
    const s = step(`${withSlow ? '9 fast + 1 slow' : '10 fast'} receivers: ${count} webhooks at ${rate}/s`);
    const from = rx.received.length;
    const accepted = new Map<number, number>();
    const t0 = Date.now();
    await paced(rate, count, async () => {
      const id = nextId();
      await sendWebhook(stack.gateways[id % stack.gateways.length].url, { id, name: 'Delivered', tag: 'bench' });
      accepted.set(id, Date.now());
    });
    const fastPaths = new Set(paths.filter((p) => p !== slowPath));
    // Only this run's plants: the stack may be shared, and other plants reach these subscribers too.
    const got = (pred: (p: string) => boolean) =>
      rx.received.slice(from).filter((r) => pred(r.path) && accepted.has(JSON.parse(r.body).id));
    await waitFor(
      'the fast deliveries',
      () => got((p) => fastPaths.has(p)).length >= count * fastPaths.size,
      120000,
      250,
    ).catch(() => undefined);
    const latencies = got((p) => fastPaths.has(p)).map((r) => Math.max(0, r.at - accepted.get(JSON.parse(r.body).id)!));
    if (slowPath) {
      await waitFor('the slow deliveries', () => got((p) => p === slowPath).length >= count, 600000, 500).catch(
        () => undefined,
      );
      const slow = got((p) => p === slowPath);
      const ids = new Set(slow.map((r) => JSON.parse(r.body).id));
      slowSummary =
        `slow receiver: ${ids.size}/${count} deliveries arrived (${slow.length} requests) ` +
        `${((Math.max(...slow.map((r) => r.at)) - t0) / 1000).toFixed(1)} s after the first webhook`;
    }
    s.done(`${latencies.length}/${count * fastPaths.size} fast deliveries`);
    rows[withSlow ? '9 fast + 1 slow: the 9 fast' : '10 fast'] = {
      deliveries: latencies.length,
      ...percentiles(latencies, [50, 95, 99]),
    };
    for (const sub of subs) await admin.call('DELETE', `/subscriptions/${sub.id}`);
  }
  console.log(`\nFast receivers' latency in ms at ${rate} webhooks/s, with and without one taking ${slowMs} ms:`);
  table(rows);
  const p95 = Object.values(rows).map((r) => (r as { p95: number }).p95);
  console.log(`p95 with the slow one / without: ${(p95[1] / Math.max(1, p95[0])).toFixed(2)} (target <= 1.20)`);
  console.log(slowSummary);
}

async function main() {
  const rate = arg('rate', 1000);
  const seconds = arg('seconds', 10);
  const subscriberCounts = listArg('subscribers', '1,10').map(Number);
  const workers = arg('workers', 1);
  const gateways = arg('gateways', 1);
  // --step: find the highest rate (webhooks/s, to 10 subscribers) whose p95 stays within 100 ms.
  const stepping = process.argv.includes('--step');
  // --kinds: the measured runs once per destination kind; without it, HTTP alone and no table of kinds.
  const kindsGiven = process.argv.includes('--kinds');
  const kinds = listArg('kinds', 'http') as Kind[];
  const unknownKinds = kinds.filter((k) => !KINDS.includes(k));
  if (unknownKinds.length > 0) throw new Error(`--kinds: ${unknownKinds.join(', ')}: not one of ${KINDS.join(', ')}`);
  const brokerKinds = kinds.filter((k): k is BrokerKind => k !== 'http');
  const stack = await startStack({ workerEnv: { DELIVERY_POLL_MS: '200' }, workers, gateways });
  if (brokerKinds.length > 0) removeTargetsOnInterrupt();
  const rx = new Receiver();
  await rx.start();
  let brokers: LocalBrokers | null = null;
  const rows: Record<string, object> = {};
  const split: Record<string, object> = {}; // where the time went, from the worker's own histograms
  const cpu: Record<string, object> = {}; // where the cores went
  const costs: Record<string, object> = {};
  const byKind: Record<string, object> = {}; // --kinds: a row per kind (and subscriber count)
  const kindFloors: Record<string, string> = {};
  const histograms = () =>
    Promise.all(
      ['plant_store_event_processing_seconds', 'plant_store_delivery_latency_seconds'].map((h) =>
        scrapeHistogram(stack.workerUrl, h),
      ),
    );
  let lastId = 6e12;
  const nextId = () => lastId++;
  try {
    if (process.argv.includes('--slow-subscriber')) {
      const s = step(`Warm-up: ${rate * 3} webhooks at ${rate}/s to one subscriber, not measured`);
      await deliveryRun(stack, rx, { subscribers: 1, rate, count: rate * 3, nextId, path: 'warm-up', waitMs: 60000 });
      s.done();
      return await slowSubscriberScenario(stack, rx, rate, seconds, nextId);
    }
    const baselineCount = Math.min(2000, rate * 2);
    let s = step(`Baseline: ${baselineCount} direct POSTs to the receiver at the same rate`);
    const direct: number[] = [];
    await paced(rate, baselineCount, async () => {
      const t0 = performance.now();
      await sendWebhook(rx.url, { id: 1, name: 'direct' }, {}, '/direct');
      direct.push(performance.now() - t0);
    });
    s.done();
    rows['baseline: direct POST to the receiver'] = { webhooks: direct.length, ...percentiles(direct, [50, 95, 99]) };

    s = step('Floor: the HTTP client alone, 20,000 delivery-sized POSTs to the same receiver (undici, then node:http)');
    const floor = await clientFloor(`${rx.url}/floor`, 'undici');
    const nodeFloor = await clientFloor(`${rx.url}/floor`, 'node-http');
    s.done(`${floor.usPerRequest.toFixed(1)} µs and ${nodeFloor.usPerRequest.toFixed(1)} µs of CPU per request`);

    // A fresh JVM and fresh V8s spend their first seconds compiling: warm them up on the same path first.
    s = step(`Warm-up: ${rate * 3} webhooks at ${rate}/s to one subscriber, not measured`);
    await deliveryRun(stack, rx, { subscribers: 1, rate, count: rate * 3, nextId, path: 'warm-up', waitMs: 60000 });
    s.done();

    const record = (label: string, subscribers: number, r: number, m: Measured) => {
      rows[label] = {
        webhooks: r * seconds,
        deliveries: m.latencies.length,
        'offered/s': r * subscribers,
        'delivered/s': m.deliveredPerSecond,
        ...percentiles(m.latencies, [50, 95, 99]),
      };
      if (m.cores) cpu[label] = m.cores;
      const c = costPerDelivery(m);
      if (c)
        costs[label] = {
          ...c,
          'worker+pg': c.worker + c.postgresql,
          floor: Number(floor.usPerRequest.toFixed(1)),
          'x floor': Number(((c.worker + c.postgresql) / floor.usPerRequest).toFixed(1)),
        };
    };
    // A kind's row: latency to the ack the worker recorded (`acked`), CPU per delivery against the kind's floor.
    const recordKind = (
      kind: Kind,
      subscribers: number,
      m: Measured,
      floorUs: number,
      acked: Map<number, number[]>,
    ) => {
      const t = timed(m.accepted, acked);
      const c = costPerDelivery({ ...m, latencies: t.latencies });
      byKind[`${kind}, ${subscribers} subscriber(s)`] = {
        deliveries: t.latencies.length,
        'offered/s': rate * subscribers,
        'delivered/s': t.deliveredPerSecond,
        ...(t.latencies.length > 0 ? percentiles(t.latencies, [50, 95]) : { p50: null, p95: null }),
        'worker µs': c?.worker ?? null,
        'postgresql µs': c?.postgresql ?? null,
        'floor µs': Number(floorUs.toFixed(1)),
        'x floor': c ? Number(((c.worker + c.postgresql) / floorUs).toFixed(1)) : null,
      };
    };

    for (const subscribers of kinds.includes('http') ? subscriberCounts : []) {
      const count = rate * seconds;
      s = step(`${subscribers} subscriber(s): ${count} webhooks at ${rate}/s`);
      const before = await histograms();
      const m = await measure(stack, rx, { subscribers, rate, count, nextId });
      s.done(`${m.latencies.length}/${count * subscribers} delivered`);
      const after = await histograms();
      split[`${subscribers}: gateway event -> plant and deliveries stored`] = histogramPercentiles(before[0], after[0]);
      split[`${subscribers}: gateway event -> 2xx recorded`] = histogramPercentiles(before[1], after[1]);
      // Offered vs delivered per second: below capacity they match; above it, latency grows with the run.
      record(`${subscribers} subscriber(s), gateway 200 -> receiver`, subscribers, rate, m);
      if (kindsGiven)
        recordKind(
          'http',
          subscribers,
          m,
          floor.usPerRequest,
          await ackedTimes(stack.env.DATABASE_URL, m.subscriptions),
        );
    }

    // Each broker kind: a destination of its own, its floor, a warm-up, then the same runs as HTTP's above.
    const local = brokerKinds.filter((k): k is Exclude<BrokerKind, 'kafka'> => k !== 'kafka');
    if (local.length > 0) brokers = await localBrokers(local);
    for (const kind of brokerKinds) {
      s = step(`${kind}: a destination of its own, the floor (20,000 direct publishes), a warm-up of ${rate * 3}`);
      const target = await createTarget(kind, stack.env, brokers);
      try {
        const f = await clientFloor(target.url, kind);
        kindFloors[kind] = `${f.usPerRequest.toFixed(1)} µs (${f.perSecond}/s)`;
        const warmUp = { subscribers: 1, rate, count: rate * 3, nextId, path: 'warm-up', waitMs: 60000, target };
        await deliveryRun(stack, rx, warmUp);
        s.done(`${target.url.replace(/\/\/[^@/]*@/, '//')}; floor ${kindFloors[kind]} of CPU per publish`);
        for (const subscribers of subscriberCounts) {
          const count = rate * seconds;
          s = step(`${kind}, ${subscribers} subscriber(s): ${count} webhooks at ${rate}/s`);
          const before = await histograms();
          const m = await measure(stack, rx, { subscribers, rate, count, nextId, target });
          s.done(`${m.latencies.length}/${count * subscribers} acked`);
          const after = await histograms();
          const label = `${kind}, ${subscribers} subscriber(s)`;
          split[`${label}: gateway event -> plant and deliveries stored`] = histogramPercentiles(before[0], after[0]);
          split[`${label}: gateway event -> ack recorded`] = histogramPercentiles(before[1], after[1]);
          if (m.cores) cpu[label] = m.cores;
          recordKind(kind, subscribers, m, f.usPerRequest, m.times); // a broker's times are the acks already
        }
      } finally {
        await target.teardown();
      }
    }

    let sustained: number | null = null;
    if (stepping) {
      // Up in steps until p95 passes 100 ms, then once more at the last rate that held: latency recovers.
      for (let r = arg('step-from', 200); r <= arg('step-to', 1200); r += arg('step-by', 100)) {
        s = step(`Step: 10 subscribers, ${r} webhooks/s (${r * 10} deliveries/s) for ${seconds} s`);
        const m = await measure(stack, rx, { subscribers: 10, rate: r, count: r * seconds, nextId });
        const p95 = percentiles(m.latencies, [95]).p95;
        s.done(`p95 ${p95} ms, ${m.deliveredPerSecond} delivered/s`);
        record(`step: 10 subscribers at ${r}/s`, 10, r, m);
        if (p95 > 100) break;
        sustained = r;
      }
      if (sustained) {
        s = step(`Back down to ${sustained}/s: does latency recover?`);
        const m = await measure(stack, rx, { subscribers: 10, rate: sustained, count: sustained * seconds, nextId });
        s.done();
        record(`after the overload, 10 subscribers at ${sustained}/s again`, 10, sustained, m);
      }
    }

    const outcome = (name: string) =>
      Promise.all(stack.workers.map((w) => metricSum(w.url, 'plant_store_deliveries_total', `outcome="${name}"`))).then(
        (per) => per.reduce((a, b) => a + b, 0),
      );
    const [sent, succeeded, retried, failed] = await Promise.all(
      ['sent', 'succeeded', 'retried', 'failed'].map(outcome),
    );
    console.log(`\nAttempts: ${sent} sent, ${succeeded} succeeded, ${retried} retried, ${failed} failed.`);
    console.log(`Connections the receiver accepted: ${rx.connections} (keep-alive reuses them).`);
    if (stack.workers.length > 1) {
      const perWorker = await Promise.all(
        stack.workers.map((w) => metricSum(w.url, 'plant_store_deliveries_total', 'outcome="sent"')),
      );
      const seen = new Map<string, number>();
      // The measured runs' subscribers only (/s0…/s9): the floor and the baseline repeat one request on purpose.
      for (const r of rx.received.filter((x) => /^\/s\d+$/.test(x.path))) {
        const key = `${r.path} ${r.headers['webhook-id']}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      const twice = [...seen.values()].filter((n) => n > 1).length;
      console.log(
        `Scale-out: ${stack.workers.length} workers sent ${perWorker.join(' + ')} attempts; ` +
          `${stack.gateways.length} gateways took the webhooks in turn; deliveries received twice: ${twice}.`,
      );
    }
    console.log(
      `\nDelivery latency in milliseconds at ${rate} webhooks/s (target p95 <= 100 ms; Convoy publishes 124 ms at 200/s):`,
    );
    table(rows);
    console.log(
      "\nWhere the time goes, per subscriber count, from the first worker's histograms (ms, interpolated within buckets):",
    );
    table(split);
    if (Object.keys(cpu).length > 0) {
      console.log(`\nCPU while sending and delivering, % of one core (the machine has ${os.availableParallelism()}):`);
      table(cpu);
    }
    if (Object.keys(costs).length > 0) {
      console.log(
        `\nCPU per successful delivery (µs), against the floor: the HTTP client alone, ${floor.usPerRequest.toFixed(1)} µs ` +
          `per request with undici (${floor.perSecond}/s), ${nodeFloor.usPerRequest.toFixed(1)} µs with node:http ` +
          `(${nodeFloor.perSecond}/s), measured in this run. Target: worker + PostgreSQL <= 2x the floor.`,
      );
      table(costs);
    }
    if (kindsGiven) {
      console.log(
        `\nPer destination kind at ${rate} webhooks/s: deliveries, latency (ms), CPU per successful delivery (µs) ` +
          `against that kind's floor:`,
      );
      table(byKind);
      const floors = Object.entries(kindFloors).map(([k, f]) => `${k} ${f}`);
      console.log(
        [
          "Latency, every row, http's too: from the gateway's 200 to the worker getting the destination's answer (a 2xx,",
          'Kafka acks=all, an AMQP confirm, a JetStream ack, an MQTT PUBACK, the XADD reply) as the attempt log records',
          'it (the attempt start + its latency, to the ms), read from PostgreSQL after the CPU was metered. No consumer',
          "reads the brokers for it: it is when the worker knew the message taken, the answer's way back included, so",
          "http's row is a little later than the receiver's arrival in the first table. Delivered/s: those deliveries",
          "over the time from the first 200 to the last ack. Floor: one publish by the worker's own connection code for",
          'the kind (kafkajs, amqplib, nats, mqtt, ioredis), 20,000 at 64 in flight to the same destination, alone in a',
          `process, in this run: ${floors.join(', ') || 'none'}; http's is the undici floor. A kind's subscribers all`,
          "publish to one destination over one pooled connection; Kafka's topic is on the bench's own Kafka (the kafka",
          'column of the CPU table includes it). A broker run ends when the broker holds every message (MQTT: as a QoS 0',
          'subscriber in the bench counts them).',
        ].join('\n'),
      );
    }
    if (sustained !== null)
      console.log(
        `\nSustained with p95 <= 100 ms: ${sustained} webhooks/s to 10 subscribers (${sustained * 10} deliveries/s).`,
      );
    else if (stepping) console.log('\nNo step held p95 <= 100 ms.');
    printPeakRss(stack);
    if (process.env.PG_STAT_STATEMENTS === '1') await printStatementStats(stack.env.DATABASE_URL);
  } finally {
    await rx.stop();
    await stack.stop();
    await brokers?.stop();
  }
}

runBench(main);
