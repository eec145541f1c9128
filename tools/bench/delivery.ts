#!/usr/bin/env node
// npm run bench:delivery — outgoing New Plant webhooks on the real stack with a local receiver: the latency
// from the gateway's 200 to the receiver getting the request, p50/p95/p99, at a fixed webhook rate with 1
// subscriber and again with 10. Baseline in the same run: a direct POST to the same receiver (the floor of
// one loopback HTTP request on this machine).
// Options: --rate 1000 --seconds 10 --subscribers 1,10 --no-build
import os from 'node:os';
import { Client } from 'pg';
import { adminClient } from '../../test/support/admin';
import { metricSum } from '../../test/support/metrics';
import { Receiver } from '../../test/support/receiver';
import { waitFor } from '../../test/support/wait';
import {
  ADMIN,
  arg,
  cpuMeter,
  histogramPercentiles,
  listArg,
  paced,
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
}

/**
 * Subscribes `subscribers` endpoints of the receiver, sends `count` webhooks at `rate`, waits (up to `waitMs`)
 * until every delivery arrived, then unsubscribes. Returns when each plant id was accepted (the 200) and when
 * each delivery arrived.
 */
async function deliveryRun(stack: Stack, rx: Receiver, { subscribers, rate, count, nextId, path, waitMs }: Run) {
  const admin = adminClient(stack.url, ADMIN);
  const subs: { id: string }[] = [];
  for (let i = 0; i < subscribers; i++) subs.push(await admin.subscribe({ url: `${rx.url}/${path}${i}` }));
  const from = rx.received.length;
  const accepted = new Map<number, number>();
  await paced(rate, count, async () => {
    const id = nextId();
    await sendWebhook(stack.url, { id, name: 'Delivered', tag: 'bench' });
    accepted.set(id, Date.now());
  });
  const expected = count * subscribers;
  await waitFor('every delivery', () => rx.received.length - from >= expected, waitMs, 250).catch(() => undefined);
  for (const sub of subs) await admin.call('DELETE', `/subscriptions/${sub.id}`);
  return { accepted, arrivals: arrivalsSince(rx, from) };
}

async function main() {
  const rate = arg('rate', 1000);
  const seconds = arg('seconds', 10);
  const subscriberCounts = listArg('subscribers', '1,10').map(Number);
  const stack = await startStack({ workerEnv: { DELIVERY_POLL_MS: '200' } });
  const rx = new Receiver();
  await rx.start();
  const rows: Record<string, object> = {};
  const split: Record<string, object> = {}; // where the time went, from the worker's own histograms
  const cpu: Record<string, object> = {}; // where the cores went
  const histograms = () =>
    Promise.all(
      ['plant_store_event_processing_seconds', 'plant_store_delivery_latency_seconds'].map((h) =>
        scrapeHistogram(stack.workerUrl, h),
      ),
    );
  let lastId = 6e12;
  const nextId = () => lastId++;
  try {
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

    // A fresh JVM and fresh V8s spend their first seconds compiling: warm them up on the same path first.
    s = step(`Warm-up: ${rate * 3} webhooks at ${rate}/s to one subscriber, not measured`);
    await deliveryRun(stack, rx, { subscribers: 1, rate, count: rate * 3, nextId, path: 'warm-up', waitMs: 60000 });
    s.done();

    for (const subscribers of subscriberCounts) {
      const count = rate * seconds;
      s = step(`${subscribers} subscriber(s): ${count} webhooks at ${rate}/s`);
      const before = await histograms();
      const meter = cpuMeter({ gateway: stack.gateway.pid, worker: stack.worker?.pid });
      const { accepted, arrivals } = await deliveryRun(stack, rx, {
        subscribers,
        rate,
        count,
        nextId,
        path: 's',
        waitMs: 120000,
      });
      const cores = meter.read();
      const latencies: number[] = [];
      let first = Infinity;
      let last = 0;
      for (const [id, at] of accepted) {
        first = Math.min(first, at);
        for (const t of arrivals.get(id) ?? []) {
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
    const outcome = (name: string) => metricSum(stack.workerUrl, 'plant_store_deliveries_total', `outcome="${name}"`);
    const [sent, succeeded, retried, failed] = await Promise.all(
      ['sent', 'succeeded', 'retried', 'failed'].map(outcome),
    );
    console.log(`\nAttempts: ${sent} sent, ${succeeded} succeeded, ${retried} retried, ${failed} failed.`);
    console.log(
      `\nDelivery latency in milliseconds at ${rate} webhooks/s (target p95 <= 100 ms; Convoy publishes 124 ms at 200/s):`,
    );
    table(rows);
    console.log(
      "\nWhere the time goes, per subscriber count, from the worker's histograms (ms, interpolated within buckets):",
    );
    table(split);
    if (Object.keys(cpu).length > 0) {
      console.log(`\nCPU while sending and delivering, % of one core (the machine has ${os.availableParallelism()}):`);
      table(cpu);
    }
    if (process.env.PG_STAT_STATEMENTS === '1') await printStatementStats(stack.env.DATABASE_URL);
  } finally {
    await rx.stop();
    await stack.stop();
  }
}

runBench(main);
