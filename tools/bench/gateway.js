#!/usr/bin/env node
// npm run bench:gateway — HTTP throughput of POST /plant/webhook on the real gateway (each 200 waits for
// Kafka's acks=all), against a baseline measured in the same run: a bare Fastify route doing the same header
// and body checks with no Kafka at all (the ceiling on this machine). Also reports how many webhooks each
// produce request carried (the batching).
// Options: --connections 64 --duration 10 --no-build
const { fork } = require('node:child_process');
const path = require('node:path');
const autocannon = require('autocannon');
const { startStack, table, TOKEN, arg, runBench } = require('./harness');
const { step } = require('../infra/progress');


function startBareFastify() {
  const child = fork(path.join(__dirname, 'bare-fastify.js'), { env: { ...process.env, TOKEN } });
  return new Promise((resolve) => child.once('message', (port) => resolve({ url: `http://127.0.0.1:${port}`, stop: () => child.kill() })));
}

function run(url, connections, duration) {
  let n = 0;
  return autocannon({
    url: `${url}/plant/webhook`,
    method: 'POST',
    connections,
    duration,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ id: 5e12 + n++, name: 'Ficus', tag: 'indoor' }) }) }],
  });
}

const summary = (r) => ({
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
  const bare = await startBareFastify();
  try {
    let s = step('Warm-up (3 s)');
    await run(stack.url, connections, 3);
    s.done();
    s = step(`Gateway: ${connections} connections for ${duration} s (each 200 after Kafka acks=all)`);
    const gw = await run(stack.url, connections, duration);
    s.done();
    s = step(`Baseline: bare Fastify, same checks, no Kafka, ${connections} connections for ${duration} s`);
    const base = await run(bare.url, connections, duration);
    s.done();
    const metrics = await (await fetch(`${stack.gatewayMetricsUrl}/metrics`)).text();
    const sum = Number(/plant_store_produce_batch_size_sum\S* (\S+)/.exec(metrics)?.[1] ?? 0);
    const cnt = Number(/plant_store_produce_batch_size_count\S* (\S+)/.exec(metrics)?.[1] ?? 0);
    table({ 'gateway (durable publish)': summary(gw), 'baseline: bare Fastify': summary(base) });
    console.log(`Gateway at ${Math.round((100 * gw.requests.average) / base.requests.average)} % of the bare-Fastify ceiling.`);
    console.log(`Produce requests: ${cnt} for ${sum} webhooks (${(sum / Math.max(1, cnt)).toFixed(1)} webhooks per Kafka request).`);
  } finally {
    bare.stop();
    await stack.stop();
  }
}

runBench(main);
