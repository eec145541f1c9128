#!/usr/bin/env node
// npm run bench:gateway — HTTP throughput of POST /plant/webhook on the real gateway (each 200 waits for
// Kafka's acks=all), against baselines measured in the same run, each in its own process: a bare Fastify route
// doing the same header and body checks with no Kafka at all (the ceiling on this machine); a plain Nest +
// Fastify controller behind Passport's bearer guard, returning at once (the framework's floor); and the naive
// webhook-to-Kafka endpoint, Fastify + kafkajs with one acks=all record per request. Also reports how many
// webhooks each produce request carried (the batching), and each process's peak RSS.
// A second gateway run sends each webhook with its own webhook-id, so the cost of the idempotency-key check shows.
// Options: --connections 64 --duration 10 --no-build
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import path from 'node:path';
import { metricSum } from '../support/metrics';
import { arg, printPeakRss, runBench, startStack, step, table, TOKEN } from './harness';

/** A baseline server in a process of its own: bare-fastify, naive-kafka or nest-guarded (this folder). */
function startBaseline(file: string, env: Record<string, string> = {}): Promise<{ url: string; stop(): void }> {
  const child = fork(path.join(__dirname, `${file}.ts`), {
    env: { ...process.env, ...env, TOKEN },
    execArgv: ['-r', 'ts-node/register/transpile-only'],
  });
  return new Promise((resolve) =>
    child.once('message', (port) => resolve({ url: `http://127.0.0.1:${port}`, stop: () => child.kill() })),
  );
}

/** `withKeys`: each webhook with its own webhook-id, so the gateway's idempotency-key check runs on every one. */
function run(url: string, connections: number, duration: number, withKeys = false) {
  let n = 0;
  return autocannon({
    url: `${url}/plant/webhook`,
    method: 'POST',
    connections,
    duration,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const id = 5e12 + n++ + (withKeys ? 1e12 : 0);
          const headers = withKeys ? { ...req.headers, 'webhook-id': `msg_bench_${id}` } : req.headers;
          return { ...req, headers, body: JSON.stringify({ id, name: 'Ficus', tag: 'indoor' }) };
        },
      },
    ],
  });
}

const summary = (r: autocannon.Result) => ({
  'req/s': Math.round(r.requests.average),
  p50ms: r.latency.p50,
  p99ms: r.latency.p99,
  non2xx: r.non2xx,
  errors: r.errors,
});

async function main() {
  const connections = arg('connections', 64);
  const duration = arg('duration', 10);
  const stack = await startStack({ startWorker: false });
  const bare = await startBaseline('bare-fastify');
  const nest = await startBaseline('nest-guarded');
  const naive = await startBaseline('naive-kafka', { KAFKA_BROKERS: stack.env.KAFKA_BROKERS });
  try {
    let s = step('Warm-up (3 s)');
    await run(stack.url, connections, 3);
    s.done();
    s = step(`Gateway: ${connections} connections for ${duration} s (each 200 after Kafka acks=all)`);
    const gw = await run(stack.url, connections, duration);
    s.done();
    s = step(`Gateway again, each webhook with its own webhook-id (the idempotency-key check on every one)`);
    const keyed = await run(stack.url, connections, duration, true);
    s.done();
    s = step(`Baseline: bare Fastify, same checks, no Kafka, ${connections} connections for ${duration} s`);
    const base = await run(bare.url, connections, duration);
    s.done();
    s = step(`Baseline: Nest + Fastify, a bearer-guarded controller (Passport), no validation, no Kafka`);
    const nestFloor = await run(nest.url, connections, duration);
    s.done();
    s = step(`Baseline: naive Fastify + kafkajs, one acks=all record per request, ${connections} connections`);
    const naiveRun = await run(naive.url, connections, duration);
    s.done();
    const sum = await metricSum(stack.gatewayMetricsUrl, 'plant_store_produce_batch_size_sum');
    const cnt = await metricSum(stack.gatewayMetricsUrl, 'plant_store_produce_batch_size_count');
    table({
      'gateway (durable publish)': summary(gw),
      'gateway, each with a webhook-id': summary(keyed),
      'baseline: bare Fastify (the ceiling)': summary(base),
      'baseline: Nest + Fastify + Passport guard (the framework)': summary(nestFloor),
      'baseline: naive Fastify + kafkajs, acks=all per request': summary(naiveRun),
    });
    const ratio = (r: autocannon.Result) => gw.requests.average / Math.max(1, r.requests.average);
    console.log(
      `Gateway at ${Math.round(100 * ratio(base))} % of the bare-Fastify ceiling (target >= 50 %), ` +
        `${Math.round(100 * ratio(nestFloor))} % of the Nest floor, ` +
        `${ratio(naiveRun).toFixed(1)}x the naive endpoint (target >= 2x).`,
    );
    console.log(
      `Produce requests: ${cnt} for ${sum} webhooks (${(sum / Math.max(1, cnt)).toFixed(1)} webhooks per Kafka request).`,
    );
    printPeakRss(stack);
  } finally {
    for (const b of [bare, nest, naive]) b.stop();
    await stack.stop();
  }
}

runBench(main);
