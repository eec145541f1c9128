#!/usr/bin/env node
// npm run bench:delivery — outgoing New Plant webhooks on the real stack with a local receiver: the latency
// from the gateway's 200 to the receiver getting the request, p50/p95/p99, at a fixed webhook rate with 1
// subscriber and again with 10. Baseline in the same run: a direct POST to the same receiver (the floor of
// one loopback HTTP request on this machine).
// Options: --rate 1000 --seconds 10 --subscribers 1,10 --no-build
const http = require('node:http');
const { startStack, paced, percentiles, postPlant, table, scrapeHistogram, histogramPercentiles, cpuMeter, ADMIN, arg, runBench } = require('./harness');
const { step } = require('../infra/progress');


async function receiver() {
  const arrivals = new Map(); // plant id -> [arrival ms per subscriber]
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const { id } = JSON.parse(Buffer.concat(chunks).toString());
      const list = arrivals.get(id) ?? [];
      list.push(Date.now());
      arrivals.set(id, list);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, arrivals, close: () => new Promise((r) => server.close(r)) };
}

async function admin(url, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body && JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/** The statements PostgreSQL spent most time on (PG_STAT_STATEMENTS=1). */
async function printStatementStats(url) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const { rows } = await client.query(
      `SELECT calls, round(total_exec_time)::int AS total_ms, round(mean_exec_time::numeric, 2) AS mean_ms, rows,
              left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8`,
    );
    console.log('\nPostgreSQL statements by total time:');
    table(rows);
  } finally {
    await client.end();
  }
}

/**
 * Subscribes `subscribers` endpoints of the receiver, sends `count` webhooks at `rate`, waits (up to `waitMs`)
 * until every delivery arrived, then unsubscribes. Returns when each plant id was accepted (the 200).
 */
async function deliveryRun(stack, rx, { subscribers, rate, count, nextId, path, waitMs }) {
  const subs = [];
  for (let i = 0; i < subscribers; i++) subs.push(await admin(stack.url, 'POST', '/subscriptions', { url: `${rx.url}/${path}${i}` }));
  const accepted = new Map();
  await paced(rate, count, async () => {
    const id = nextId();
    await postPlant(stack.url, { id, name: 'Delivered', tag: 'bench' });
    accepted.set(id, Date.now());
  });
  const deadline = Date.now() + waitMs;
  const expected = count * subscribers;
  const received = () => [...accepted.keys()].reduce((n, id) => n + (rx.arrivals.get(id)?.length ?? 0), 0);
  while (received() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  for (const sub of subs) await admin(stack.url, 'DELETE', `/subscriptions/${sub.id}`);
  return accepted;
}

async function main() {
  const rate = arg('rate', 1000);
  const seconds = arg('seconds', 10);
  const subscriberCounts = (process.argv.includes('--subscribers') ? process.argv[process.argv.indexOf('--subscribers') + 1] : '1,10').split(',').map(Number);
  const stack = await startStack({ workerEnv: { DELIVERY_POLL_MS: '200' } });
  const rx = await receiver();
  const rows = {};
  const split = {}; // where the time went, from the worker's own histograms
  const cpu = {}; // where the cores went
  const histograms = () =>
    Promise.all(['plant_store_event_processing_seconds', 'plant_store_delivery_latency_seconds'].map((h) => scrapeHistogram(stack.workerUrl, h)));
  let lastId = 6e12;
  const nextId = () => lastId++;
  try {
    const baselineCount = Math.min(2000, rate * 2);
    let s = step(`Baseline: ${baselineCount} direct POSTs to the receiver at the same rate`);
    const direct = [];
    await paced(rate, baselineCount, async () => {
      const t0 = performance.now();
      await postPlant(rx.url, { id: 1, name: 'direct' }, {}, '/direct');
      direct.push(performance.now() - t0);
    });
    s.done();
    rows['baseline: direct POST to the receiver'] = { webhooks: direct.length, ...percentiles(direct, [50, 95, 99]) };

    // A fresh JVM and fresh V8s spend their first seconds compiling: warm them up on the same path first.
    s = step(`Warm-up: ${rate * 3} webhooks at ${rate}/s to one subscriber, not measured`);
    await deliveryRun(stack, rx, { subscribers: 1, rate, count: rate * 3, nextId, path: 'warm-up', waitMs: 60000 });
    s.done();

    for (const subscribers of subscriberCounts) {
      const count = rate * seconds;
      s = step(`${subscribers} subscriber(s): ${count} webhooks at ${rate}/s`);
      const before = await histograms();
      const meter = cpuMeter({ gateway: stack.gateway.pid, worker: stack.worker.pid });
      const accepted = await deliveryRun(stack, rx, { subscribers, rate, count, nextId, path: 's', waitMs: 120000 });
      const cores = meter.read();
      const latencies = [];
      let first = Infinity;
      let last = 0;
      for (const [id, at] of accepted) {
        first = Math.min(first, at);
        for (const t of rx.arrivals.get(id) ?? []) {
          latencies.push(Math.max(0, t - at));
          last = Math.max(last, t);
        }
      }
      if (cores) cpu[`${subscribers} subscriber(s)`] = cores;
      s.done(`${latencies.length}/${count * subscribers} delivered`);
      const after = await histograms();
      split[`${subscribers}: gateway event -> plant and deliveries stored`] = histogramPercentiles(before[0], after[0]);
      split[`${subscribers}: gateway event -> 2xx recorded`] = histogramPercentiles(before[1], after[1]);
      // Offered vs delivered per second: below capacity they match; above it, latency grows with the run.
      rows[`${subscribers} subscriber(s), gateway 200 -> receiver`] = {
        webhooks: count,
        deliveries: latencies.length,
        'offered/s': rate * subscribers,
        'delivered/s': Math.round(latencies.length / Math.max(0.001, (last - first) / 1000)),
        ...percentiles(latencies, [50, 95, 99]),
      };
    }
    const metrics = await (await fetch(`${stack.workerUrl}/metrics`)).text();
    const outcome = (name) =>
      [...metrics.matchAll(new RegExp(`plant_store_deliveries_total\\{[^}]*outcome="${name}"[^}]*\\} (\\S+)`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
    console.log(`\nAttempts: ${outcome('sent')} sent, ${outcome('succeeded')} succeeded, ${outcome('retried')} retried, ${outcome('failed')} failed.`);
    console.log(`\nDelivery latency in milliseconds at ${rate} webhooks/s (target p95 <= 100 ms; Convoy publishes 124 ms at 200/s):`);
    table(rows);
    console.log("\nWhere the time goes, per subscriber count, from the worker's histograms (ms, interpolated within buckets):");
    table(split);
    if (Object.keys(cpu).length > 0) {
      console.log('\nCPU while sending and delivering, % of one core (the machine has ' + require('node:os').availableParallelism() + '):');
      table(cpu);
    }
    if (process.env.PG_STAT_STATEMENTS === '1') await printStatementStats(stack.env.DATABASE_URL);
  } finally {
    await rx.close();
    await stack.stop();
  }
}

runBench(main);
