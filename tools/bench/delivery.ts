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
// With --kinds http,kafka,amqp,nats,mqtt,redis,sqs (default: http alone, and no table of kinds): the same measurement
// with the subscribers pointed at each kind's destination in turn (a topic, queue, stream or key of its own on the
// local brokers, removed after), and a table of kinds: delivered/s, latency to the ack the worker recorded, CPU
// per delivery against that kind's floor (the same client code publishing alone, as the undici floor is to HTTP).
// The runs themselves (send, wait, latency, CPU) are in delivery-runs.ts; --kinds's own part in delivery-kinds.ts.
// Options: --rate 1000 --seconds 10 --subscribers 1,10 --step [--step-from 200 --step-to 1200 --step-by 100]
//          --workers 1 --gateways 1 --no-build --slow-subscriber [--slow-ms 2000] --kinds http
import os from 'node:os';
import { adminClient } from '../harness/admin';
import { metricSum } from '../harness/metrics';
import { Receiver } from '../harness/receiver';
import { waitFor } from '../harness/wait';
import { brokerKindRuns, clientFloor, KindTable, kindsArg, localBrokersFor } from './delivery-kinds';
import { ackedTimes, costPerDelivery, deliveryRun, measure, Measured } from './delivery-runs';
import { BrokerBases, removeTargetsOnInterrupt } from './destination-targets';
import {
  ADMIN,
  arg,
  histogramPercentiles,
  listArg,
  paced,
  printPeakRss,
  percentiles,
  runBench,
  scrapeHistogram,
  sendWebhook,
  Stack,
  printStatementStats,
  startStack,
  step,
  table,
} from './harness';

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
  const { given: kindsGiven, kinds, brokerKinds } = kindsArg();
  const stack = await startStack({ workerEnv: { DELIVERY_POLL_MS: '200' }, workers, gateways });
  if (brokerKinds.length > 0) removeTargetsOnInterrupt();
  const rx = new Receiver();
  await rx.start();
  let brokers: BrokerBases | null = null;
  const rows: Record<string, object> = {};
  const split: Record<string, object> = {}; // where the time went, from the worker's own histograms
  const cpu: Record<string, object> = {}; // where the cores went
  const loops: Record<string, object> = {}; // and how busy each app's one thread was
  const costs: Record<string, object> = {};
  const byKind = new KindTable(rate); // --kinds: a row per kind (and subscriber count)
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
      for (const [app, busy] of Object.entries(m.eventLoops)) loops[`${label}: ${app}`] = busy;
      const c = costPerDelivery(m);
      if (c)
        costs[label] = {
          ...c,
          'worker+pg': c.worker + c.postgresql,
          floor: Number(floor.usPerRequest.toFixed(1)),
          'x floor': Number(((c.worker + c.postgresql) / floor.usPerRequest).toFixed(1)),
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
        byKind.record(
          'http',
          subscribers,
          m,
          floor.usPerRequest,
          await ackedTimes(stack.env.DATABASE_URL, m.subscriptions),
        );
    }

    // Each broker kind: a destination of its own, its floor, a warm-up, then the same runs as HTTP's above.
    brokers = await localBrokersFor(brokerKinds);
    await brokerKindRuns(brokerKinds, {
      stack,
      rx,
      brokers,
      rate,
      seconds,
      subscriberCounts,
      nextId,
      histograms,
      split,
      cpu,
      byKind,
    });

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
    if (Object.keys(loops).length > 0) {
      console.log(
        "\nEach app's event loop (its one JavaScript thread), % busy over the run and in its busiest second " +
          '(near 100: that process is the limit, whatever the slots):',
      );
      table(loops);
    }
    if (Object.keys(costs).length > 0) {
      console.log(
        `\nCPU per successful delivery (µs), against the floor: the HTTP client alone, ${floor.usPerRequest.toFixed(1)} µs ` +
          `per request with undici (${floor.perSecond}/s), ${nodeFloor.usPerRequest.toFixed(1)} µs with node:http ` +
          `(${nodeFloor.perSecond}/s), measured in this run. Target: worker + PostgreSQL <= 2x the floor.`,
      );
      table(costs);
    }
    if (kindsGiven) byKind.print();
    if (sustained !== null)
      console.log(
        `\nSustained with p95 <= 100 ms: ${sustained} webhooks/s to 10 subscribers (${sustained * 10} deliveries/s).`,
      );
    else if (stepping) console.log('\nNo step held p95 <= 100 ms.');
    printPeakRss(stack);
    if (process.env.PG_STAT_STATEMENTS === '1')
      await printStatementStats(stack.env.DATABASE_URL, 'PostgreSQL statements by total time:');
  } finally {
    await rx.stop();
    await stack.stop();
    await brokers?.stop();
  }
}

runBench(main);
