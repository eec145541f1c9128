#!/usr/bin/env node
// npm run bench:gateway — HTTP throughput of POST /plant/webhook on the real gateway (each 200 waits for
// Kafka's acks=all), against baselines measured in the same run, each in its own process: a bare Fastify route
// doing the same header and body checks with no Kafka at all (the ceiling on this machine); a plain Nest +
// Fastify controller behind Passport's bearer guard, returning at once (the framework's floor); and the naive
// webhook-to-Kafka endpoint, Fastify + kafkajs with one acks=all record per request. Also reports how many
// webhooks each produce request carried (the batching), the request -> 200 latency at a fixed rate (open loop),
// and each process's peak RSS.
// A second gateway run sends each webhook with its own webhook-id (at least --keys of them, 100,000 by
// default), so the cost of the idempotency-key check and the memory of the keys show.
// The load generator is wrk (Debian package `wrk`, found or installed by load.ts; autocannon when there is none):
// a separate C process. The run ends by measuring the bare-Fastify ceiling again with twice the connections and
// two wrk threads, and with autocannon, to show the generator is not what limits it.
// Options: --connections 64 --duration 10 --rate 1000 (0: skip the fixed-rate run) --keys 100000
// --generator wrk|autocannon --no-build --first-load-only (stop after the fresh gateway's first 15 s)
// --latency-only N: after the first load, N runs of --steady seconds (10) at --rate, open loop, each one's
// latency and what it cost, then stop (no saturation runs): a p99 over 10 s holds a few collections of the
// gateway's and the broker's, so one run says little; N of them, and their median, say more.
import { fork } from 'node:child_process';
import path from 'node:path';
import { metricSum } from '../harness/metrics';
import {
  arg,
  cpuMeter,
  histogramPercentiles,
  paced,
  percentiles,
  printPeakRss,
  runBench,
  scrapeHistogram,
  sendWebhook,
  Stack,
  startStack,
  step,
  table,
  TOKEN,
} from './harness';
import { Generator, load, LoadOptions, LoadResult, locateWrk } from './load';
import { medianOf } from './noisy-rounds';

/** A baseline server in a process of its own: bare-fastify, naive-kafka or nest-guarded (this folder). */
function startBaseline(file: string, env: Record<string, string> = {}): Promise<{ url: string; stop(): void }> {
  const child = fork(path.join(__dirname, `${file}.ts`), {
    env: { ...process.env, ...env, TOKEN },
    // tsconfig-paths: naive-kafka imports @app/kafka (without it the fork died and the run waited forever).
    execArgv: ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'],
  });
  return new Promise((resolve) =>
    child.once('message', (port) => resolve({ url: `http://127.0.0.1:${port}`, stop: () => child.kill() })),
  );
}

async function main() {
  const connections = arg('connections', 64);
  const duration = arg('duration', 10);
  const rate = arg('rate', 1000);
  const keys = arg('keys', 100_000);
  // Checked before anything starts: a typo should not cost a stack and a first load.
  const latencyOnly = process.argv.includes('--latency-only')
    ? { runs: arg('latency-only', 3), seconds: arg('steady', 10) }
    : null;
  if (latencyOnly && !(Number.isInteger(latencyOnly.runs) && latencyOnly.runs >= 1))
    throw new Error('--latency-only: give a whole number of runs from 1');
  if (latencyOnly && !(Number.isInteger(latencyOnly.seconds) && latencyOnly.seconds >= 1))
    throw new Error('--steady: give a whole number of seconds from 1');
  const generatorArg = process.argv[process.argv.indexOf('--generator') + 1];
  const wanted: Generator = process.argv.includes('--generator') ? (generatorArg as Generator) : 'wrk';
  const generator: Generator = wanted === 'wrk' && locateWrk() ? 'wrk' : 'autocannon';
  const run = (url: string, options: Partial<LoadOptions> = {}) =>
    load(generator, url, { connections, duration, ...options });
  const stack = await startStack({ startWorker: false });
  const bare = await startBaseline('bare-fastify');
  const nest = await startBaseline('nest-guarded');
  const naive = await startBaseline('naive-kafka', { KAFKA_BROKERS: stack.env.KAFKA_BROKERS });
  try {
    let s: ReturnType<typeof step>;
    let firstLoad: Awaited<ReturnType<typeof fixedRate>> | null = null;
    if (rate > 0) {
      // The generator first, against the bare route: a cold generator's own delays would be charged to the fresh
      // gateway. Its p99 here is the floor of the first-load figures.
      s = step(`Warming the load generator: the bare Fastify route at ${rate}/s for 3 s`);
      const { results: warm } = await timedWebhooks(bare.url, rate, 3 * rate, 4e12);
      s.done(`p50 ${percentiles(warm, [50]).p50} ms, p99 ${percentiles(warm, [99]).p99} ms`);
      // Before any warm-up of the gateway: what the first senders of a freshly started one meet (issue #34 saw a
      // 3.3 s p99).
      s = step(`First load: the fresh gateway at ${rate} webhooks/s for 15 s, open loop`);
      firstLoad = await fixedRate(stack, rate, 15 * rate, 5e12);
      s.done();
      if (process.argv.includes('--first-load-only')) return printFirstLoad(rate, firstLoad);
      // Awaited here: the finally below stops the stack.
      if (latencyOnly) return await latencyRuns(stack, rate, firstLoad, latencyOnly);
    }
    s = step(`Warm-up (3 s, ${generator})`);
    await run(stack.url, { duration: 3 });
    s.done();
    s = step(`Gateway: ${connections} connections for ${duration} s (each 200 after Kafka acks=all), ${generator}`);
    // Saturated, the gateway's own thread is the limit here: its CPU per webhook is steadier than its webhooks/s.
    const saturatedMeter = cpuMeter({ gateway: stack.gateway.pid });
    const gw = await run(stack.url);
    const saturated = perWebhook(saturatedMeter.cpuSeconds(), gw.requests);
    s.done();
    let steady: Awaited<ReturnType<typeof fixedRate>> | null = null;
    if (rate > 0) {
      s = step(`Gateway at ${rate} webhooks/s for 10 s, open loop: request -> 200 latency`);
      steady = await fixedRate(stack, rate, 10 * rate, 8e12);
      s.done();
    }
    s = step(`Gateway again, each webhook with its own webhook-id, until ${keys} distinct ids were sent`);
    const keyed = await run(stack.url, { keyed: true, idBase: 6e12 });
    // Topped up (new ids each time) until the idempotency keys have seen `keys` distinct ids.
    for (let base = 7e12, sent = keyed.requests; sent < keys; base += 1e11) {
      const more = await run(stack.url, { keyed: true, idBase: base, duration: 5 });
      sent += more.requests;
      keyed.requests = sent;
    }
    s.done(`${keyed.requests} distinct webhook-ids`);
    s = step(`Baseline: bare Fastify, same checks, no Kafka, ${connections} connections for ${duration} s`);
    const base = await run(bare.url);
    s.done();
    s = step(`Baseline: Nest + Fastify, a bearer-guarded controller (Passport), no validation, no Kafka`);
    const nestFloor = await run(nest.url);
    s.done();
    s = step(`Baseline: naive Fastify + kafkajs, one acks=all record per request, ${connections} connections`);
    const naiveRun = await run(naive.url);
    s.done();
    const sum = await metricSum(stack.gatewayMetricsUrl, 'plant_store_produce_batch_size_sum');
    const cnt = await metricSum(stack.gatewayMetricsUrl, 'plant_store_produce_batch_size_count');
    table({
      'gateway (durable publish)': gw,
      'gateway, each with a webhook-id': keyed,
      'baseline: bare Fastify (the ceiling)': base,
      'baseline: Nest + Fastify + Passport guard (the framework)': nestFloor,
      'baseline: naive Fastify + kafkajs, acks=all per request': naiveRun,
    });
    console.log(
      'CPU per webhook in the first gateway run, saturated (µs; the load generator is a process of its own):',
    );
    table({ [`${generator}, ${connections} connections`]: saturated });
    if (steady) {
      console.log(`\nGateway at a fixed ${rate}/s (open loop, node:http from this process; target p99 <= 10 ms):`);
      const sent = { 'req/s': Math.round(steady.count / steady.seconds), ...steady.latency, non200: steady.non200 };
      table({ 'request -> 200 (ms)': sent, 'of which valid -> Kafka ack (gateway histogram, ms)': steady.publish });
      console.log('CPU per webhook at that rate (µs), and the batching:');
      table({ [`${rate}/s`]: steady.cost });
    }
    if (firstLoad) printFirstLoad(rate, firstLoad);
    const ratio = (r: LoadResult) => gw['req/s'] / Math.max(1, r['req/s']);
    console.log(
      `Gateway at ${Math.round(100 * ratio(base))} % of the bare-Fastify ceiling (target >= 50 %), ` +
        `${Math.round(100 * ratio(nestFloor))} % of the Nest floor, ` +
        `${ratio(naiveRun).toFixed(1)}x the naive endpoint (target >= 2x).`,
    );
    console.log(
      `Produce requests: ${cnt} for ${sum} webhooks (${(sum / Math.max(1, cnt)).toFixed(1)} webhooks per Kafka request).`,
    );
    printPeakRss(stack);
    if (generator === 'wrk') await checkGenerator(bare.url, base, connections, duration);
  } finally {
    for (const b of [bare, nest, naive]) b.stop();
    await stack.stop();
  }
}

/** `--latency-only N`: N steady runs at `rate`, each printed, and the median of their percentiles. */
async function latencyRuns(
  stack: Stack,
  rate: number,
  firstLoad: Awaited<ReturnType<typeof fixedRate>>,
  { runs, seconds }: { runs: number; seconds: number },
) {
  const rows: Record<string, Record<string, number>> = {};
  for (let i = 1; i <= runs; i++) {
    const s = step(`Steady run ${i} of ${runs}: ${rate} webhooks/s for ${seconds} s, open loop`);
    const r = await fixedRate(stack, rate, seconds * rate, 8.1e12 + i * 1e10);
    s.done(`p99 ${r.latency.p99} ms`);
    const cost = Object.fromEntries(Object.entries(r.cost).filter(([, v]) => v > 0)); // the processes that ran
    rows[`run ${i}`] = {
      ...r.latency,
      'ack p99': (r.publish as Record<string, number | null>).p99 ?? NaN,
      non200: r.non200,
      ...cost,
    };
  }
  const median = (k: string) => medianOf(Object.values(rows).map((r) => r[k]));
  rows.median = Object.fromEntries(Object.keys(rows['run 1']).map((k) => [k, Math.round(10 * median(k)) / 10]));
  printFirstLoad(rate, firstLoad);
  console.log(`\nRequest -> 200 (ms) at a steady ${rate}/s, ${runs} runs of ${seconds} s (target: p99 <= 10 ms):`);
  table(rows);
  printPeakRss(stack);
}

function printFirstLoad(rate: number, firstLoad: Awaited<ReturnType<typeof fixedRate>>) {
  console.log(`\nThe first 15 s of a fresh gateway at ${rate}/s, by second sent (target: no stall, p99 <= 10 ms):`);
  table(firstLoad.bySecond);
  table({ 'valid -> Kafka ack over the 15 s (gateway histogram, ms)': firstLoad.publish });
  console.log('CPU per webhook over the 15 s (µs), and the batching:');
  table({ [`${rate}/s`]: firstLoad.cost });
}

/**
 * The bare-Fastify ceiling again, with twice the connections and two wrk threads, and with autocannon: if more of
 * the generator does not raise it, the generator was not the limit.
 */
async function checkGenerator(url: string, first: LoadResult, connections: number, duration: number) {
  const s = step('Is the load generator the limit? The bare-Fastify ceiling with more of it, and with autocannon');
  const more = await load('wrk', url, { connections: 2 * connections, duration, threads: 2 });
  const inProcess = await load('autocannon', url, { connections, duration });
  s.done();
  const rows = [first, more, inProcess];
  table(Object.fromEntries(rows.map((r) => [r.generator, { 'req/s': r['req/s'], p99ms: r.p99ms }])));
  const rise = more['req/s'] / Math.max(1, first['req/s']) - 1;
  console.log(
    `Twice the connections and threads: ${rise >= 0 ? '+' : ''}${Math.round(100 * rise)} % ` +
      `(${Math.abs(rise) <= 0.1 ? 'within 10 %: the generator is not the limit' : 'more than 10 %: read the ratios with care'}); ` +
      `autocannon reached ${Math.round((100 * inProcess['req/s']) / Math.max(1, first['req/s']))} % of wrk.`,
  );
}

/** `count` webhooks to `url` at `rate`/s, open loop, plant ids from `idBase`: each one's time to its answer (ms). */
async function timedWebhooks(url: string, rate: number, count: number, idBase: number) {
  let non200 = 0;
  const { results, seconds } = await paced(rate, count, async (i) => {
    const started = performance.now();
    const res = await sendWebhook(url, { id: idBase + i, name: 'Ficus', tag: 'indoor' });
    if (res.status !== 200) non200++;
    return performance.now() - started;
  });
  return { results, seconds, non200 };
}

/**
 * `count` webhooks at `rate`/s, open loop, each with a plant id of its own (from `idBase`); the latency of each
 * 200, overall and by the second it was sent in (where a stall shows).
 */
async function fixedRate(
  stack: { url: string; gatewayMetricsUrl: string; gateway: { pid?: number } },
  rate: number,
  count: number,
  idBase: number,
) {
  const { url, gatewayMetricsUrl } = stack;
  const histogram = 'plant_store_publish_latency_seconds';
  const before = await scrapeHistogram(gatewayMetricsUrl, histogram);
  const requestsBefore = await metricSum(gatewayMetricsUrl, 'plant_store_produce_batch_size_count');
  const meter = cpuMeter({ gateway: stack.gateway.pid });
  const { results, seconds, non200 } = await timedWebhooks(url, rate, count, idBase);
  const bySecond: Record<string, Record<string, number>> = {};
  for (let from = 0; from < results.length; from += rate) {
    const window = results.slice(from, from + rate);
    bySecond[`${from / rate}-${from / rate + 1} s`] = {
      ...percentiles(window, [50, 99]),
      max: Number(Math.max(...window).toFixed(1)),
    };
  }
  // The share of the latency spent waiting for Kafka (queued in a partition's lane, then the acks=all answer).
  const publish = histogramPercentiles(before, await scrapeHistogram(gatewayMetricsUrl, histogram), [50, 99, 99.9]);
  // What a webhook costs at a steady rate, where requests do not queue up to be batched (the gateway and the
  // broker alike; the generator's own share beside them).
  const requests = (await metricSum(gatewayMetricsUrl, 'plant_store_produce_batch_size_count')) - requestsBefore;
  const cost = {
    ...perWebhook(meter.cpuSeconds(), count),
    'webhooks per produce request': Number((count / Math.max(1, requests)).toFixed(2)),
  };
  return { count, seconds, non200, latency: percentiles(results, [50, 99, 99.9]), bySecond, publish, cost };
}

/** CPU seconds by process → µs per webhook. */
const perWebhook = (used: Record<string, number> | null, webhooks: number): Record<string, number> =>
  Object.fromEntries(Object.entries(used ?? {}).map(([k, v]) => [k, Math.round((1e6 * v) / Math.max(1, webhooks))]));

runBench(main);
