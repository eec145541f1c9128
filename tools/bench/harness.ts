// Shared pieces of the benchmarks: the real stack (local Kafka, PostgreSQL, built gateway and worker as
// separate processes), an open-loop load generator, percentiles and CPU accounting. Helpers the end-to-end
// tests already have (receiver, waiting, the admin client, metrics) are imported from tools/harness.
import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { Client } from 'pg';

import { startAppStack } from '../harness/app-stack';
import { stopEverythingOnInterrupt } from '../local-stack/supervisor';
import { build } from '../local-stack/build';
import { info, step } from '../local-stack/progress';

export { info, step };

export const TOKEN = 'bench-webhook-token-0123456789';
export const ADMIN = 'bench-admin-token-0123456789';

export interface Stack {
  env: Record<string, string>;
  /** The first gateway; `gateways` holds every one (`--gateways N`). */
  gateway: ChildProcess;
  gateways: { process: ChildProcess; url: string; metricsUrl: string }[];
  /** The first worker; `workers` holds every one (`--workers N`), all in one consumer group. */
  worker: ChildProcess | null;
  workers: { process: ChildProcess; url: string }[];
  url: string;
  gatewayMetricsUrl: string;
  workerUrl: string;
  startWorker(extra?: Record<string, string>): Promise<ChildProcess>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

export async function startStack({
  workerEnv = {},
  startWorker = true,
  workers = 1,
  gateways = 1,
}: { workerEnv?: Record<string, string>; startWorker?: boolean; workers?: number; gateways?: number } = {}) {
  if (!process.argv.includes('--no-build')) await build();
  stopEverythingOnInterrupt('the benchmark');
  const s = step('Starting worker and gateway');
  const apps = await startAppStack({
    profile: 'bench',
    tokens: { webhook: TOKEN, admin: ADMIN },
    workerEnv,
    workers: startWorker ? workers : 0,
    gateways,
    // Replicas after the first listen on ports of their own (3301, 9563…; workers 9562, 9564, …).
    ports: { gateway: 3300, gatewayMetrics: 9561, worker: 9560 },
    quiet: !process.env.BENCH_VERBOSE,
  });
  const stack: Stack = {
    env: apps.env,
    gateway: apps.gateways[0].service.child!,
    gateways: apps.gateways.map((g) => ({ process: g.service.child!, url: g.url, metricsUrl: g.metricsUrl })),
    worker: apps.workers[0]?.service.child ?? null,
    workers: apps.workers.map((w) => ({ process: w.service.child!, url: w.url })),
    url: apps.gateways[0].url,
    gatewayMetricsUrl: apps.gateways[0].metricsUrl,
    workerUrl: apps.workers[0]?.url ?? 'http://127.0.0.1:9560',
    async startWorker(extra = {}) {
      const added = await apps.addWorker(extra);
      const worker = added.service.child!;
      stack.worker ??= worker;
      stack.workers.push({ process: worker, url: added.url });
      return worker;
    },
    async stopWorker() {
      const first = apps.workers.find((w) => w.service.child === stack.worker);
      if (first) await apps.removeWorker(first);
      stack.workers = stack.workers.filter((w) => w.process !== stack.worker);
      stack.worker = null;
    },
    stop: () => apps.stop(),
  };
  s.done();
  return stack;
}

/** Sends `total` requests at `rate` per second, open loop (a slow answer does not slow the sender). */
export async function paced<T>(rate: number, total: number, send: (i: number) => Promise<T>) {
  const started = performance.now();
  const inflight: Promise<T>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(send(i));
  }
  const results = await Promise.all(inflight);
  return { results, seconds: (performance.now() - started) / 1000 };
}

export function percentiles(values: number[], ps = [50, 95, 99, 99.9]): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return Object.fromEntries(ps.map((p) => [`p${p}`, Number(at(p).toFixed(1))]));
}

// The load generator shares the 2 cores with everything it measures: node:http with a keep-alive pool costs
// far less CPU per request than fetch (which the tests' postPlant uses), so more of the machine is left to the
// system under test.
const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

/** POSTs a New Plant; resolves with the status and body once the whole response is read. */
export function sendWebhook(
  url: string,
  plant: unknown,
  headers: Record<string, string> = {},
  path = '/plant/webhook',
) {
  const body = JSON.stringify(plant);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const table = (rows: unknown) => console.table(rows);

/**
 * CPU used by each part of the stack between cpuMeter() and read(), in % of one core, from /proc (Linux only:
 * elsewhere read() returns null). The machine is shared by all of them, so this says where the cores went.
 */
export function cpuMeter(pids: Record<string, number | undefined>) {
  const TICKS = 100; // USER_HZ on Linux
  const byPid = new Map<number, string>([
    ...Object.entries(pids)
      .filter((e): e is [string, number] => e[1] !== undefined)
      .map(([name, pid]): [number, string] => [pid, name]),
    [process.pid, 'bench (load + receiver)'],
  ]);
  /** Whose the process is, from its stat line, or null if none of ours. */
  const owner = (pid: number, stat: string) => {
    if (byPid.has(pid)) return byPid.get(pid)!;
    if (stat.includes('(postgres)')) {
      // Its process title says which part: a backend serving the apps, or a background process.
      const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const part = /autovacuum|walwriter|checkpointer|background writer|walsummarizer|io worker/.exec(title);
      return part ? `postgresql (${part[0]})` : 'postgresql';
    }
    if (stat.includes('(java)') && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka'))
      return 'kafka';
    return null;
  };
  const snapshot = () => {
    const ticks: Record<string, number> = {};
    let pidsNow: number[];
    try {
      pidsNow = fs
        .readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .map(Number);
    } catch {
      return null;
    }
    for (const pid of pidsNow) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const name = owner(pid, stat);
        if (!name) continue;
        const fields = stat.split(') ')[1].split(' ');
        // utime + stime; and for PostgreSQL cutime + cstime too: a backend that exits (a pool closing an idle
        // connection) takes its ticks with it, and they reappear in the postmaster's children's times. Without
        // them PostgreSQL's share could even come out negative.
        const children = name.startsWith('postgresql') ? Number(fields[13]) + Number(fields[14]) : 0;
        ticks[name] = (ticks[name] ?? 0) + Number(fields[11]) + Number(fields[12]) + children;
      } catch {
        // exited meanwhile
      }
    }
    return { at: performance.now(), ticks };
  };
  const start = snapshot();
  /** CPU seconds each used since the meter started. */
  const cpuSeconds = (): Record<string, number> | null => {
    const end = snapshot();
    if (!start || !end) return null;
    return Object.fromEntries(
      Object.keys(end.ticks)
        .sort()
        .map((k) => [k, (end.ticks[k] - (start.ticks[k] ?? 0)) / TICKS]),
    );
  };
  return {
    cpuSeconds,
    /** % of one core each used since the meter started. */
    read(): Record<string, number> | null {
      const used = cpuSeconds();
      if (!used || !start) return null;
      const seconds = (performance.now() - start.at) / 1000;
      return Object.fromEntries(Object.entries(used).map(([k, v]) => [k, Math.round((100 * v) / seconds)]));
    },
  };
}

/** Prints the peak resident memory of the stack's gateways and workers (targets: 150 MB and 200 MB). */
export function printPeakRss(stack: Stack) {
  console.log('\nPeak resident memory (MB; targets: gateway <= 150, worker <= 200):');
  table({
    peak: peakRss({
      ...Object.fromEntries(stack.gateways.map((g, i) => [`gateway${i || ''}`, g.process.pid])),
      ...Object.fromEntries(stack.workers.map((w, i) => [`worker${i || ''}`, w.process.pid])),
    }),
  });
}

/** Each process's peak resident memory so far (VmHWM, MB), from /proc (Linux only: empty elsewhere). */
export function peakRss(pids: Record<string, number | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    try {
      const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (kb) out[name] = Math.round(Number(kb[1]) / 1024);
    } catch {
      // not running, or not Linux
    }
  }
  return out;
}

/** A histogram from a /metrics page: cumulative count per bucket bound, summed over its label sets. */
export async function scrapeHistogram(url: string, name: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const le = /le="([^"]+)"/.exec(m[1])![1];
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[2]));
  }
  return buckets;
}

/**
 * Percentiles (ms) of what a histogram observed between two scrapes, interpolated within buckets as
 * Prometheus' histogram_quantile does: approximate, to the width of a bucket.
 */
export function histogramPercentiles(before: Map<number, number>, after: Map<number, number>, ps = [50, 95, 99]) {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => after.get(b)! - (before.get(b) ?? 0));
  const total = counts[counts.length - 1];
  const at = (p: number) => {
    const rank = (p / 100) * total;
    const i = counts.findIndex((c) => c >= rank);
    if (bounds[i] === Infinity) return bounds[i - 1] * 1000;
    const lower = i === 0 ? 0 : bounds[i - 1];
    const below = i === 0 ? 0 : counts[i - 1];
    const inBucket = counts[i] - below;
    return (lower + (bounds[i] - lower) * (inBucket > 0 ? (rank - below) / inBucket : 1)) * 1000;
  };
  return { n: total, ...Object.fromEntries(ps.map((p) => [`p${p}`, total > 0 ? Number(at(p).toFixed(1)) : null])) };
}

/** `--name value` from the command line, as a number, or the default. */
export function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** `--name a,b,c` from the command line, or the default. */
export function listArg(name: string, dflt: string): string[] {
  const i = process.argv.indexOf(`--${name}`);
  return (i > 0 ? process.argv[i + 1] : dflt).split(',');
}

/** Runs a benchmark's main, printing a failure and exiting non-zero. */
export function runBench(main: () => Promise<void>) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/**
 * The statements PostgreSQL spent most time on since the last reset (PG_STAT_STATEMENTS=1, which the launcher's
 * PostgreSQL then records), under `title`; `reset` starts the count again (a phase of its own).
 */
export async function printStatementStats(url: string, title: string, { reset = false } = {}) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    if (reset) return void (await client.query('SELECT pg_stat_statements_reset()'));
    const { rows } = await client.query(
      `SELECT calls, round(total_exec_time)::int AS total_ms, round(mean_exec_time::numeric, 2) AS mean_ms,
              round(total_plan_time)::int AS plan_ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query
       FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 8`,
    );
    console.log(`\n${title}`);
    table(rows);
  } finally {
    await client.end();
  }
}
