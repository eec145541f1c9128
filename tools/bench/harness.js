// Shared pieces of the benchmarks: the real stack (local Kafka, PostgreSQL, built gateway and worker as
// separate processes), an open-loop load generator, and percentiles.
const { randomBytes } = require('node:crypto');
const http = require('node:http');
const { ensureDependencies, build } = require('../infra/deps');

const TOKEN = 'bench-webhook-token-0123456789';
const ADMIN = 'bench-admin-token-0123456789';

async function startStack({ workerEnv = {}, startWorker = true } = {}) {
  ensureDependencies();
  if (!process.argv.includes('--no-build')) build();
  const { bringUp } = require('../infra');
  const { runApp, waitReady, stopProcess } = require('../infra/apps');
  const { step } = require('../infra/progress');
  const infra = await bringUp('bench');
  const env = {
    ...infra.env,
    PORT: '3300',
    METRICS_PORT: '9561',
    WORKER_METRICS_PORT: '9560',
    WEBHOOK_TOKENS: TOKEN,
    ADMIN_TOKENS: ADMIN,
    LOG_LEVEL: 'warn',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_GROUP_ID: `bench-${randomBytes(3).toString('hex')}`,
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
  };
  const s = step('Starting gateway' + (startWorker ? ' and worker' : ''));
  const gateway = runApp('gateway', env, { quiet: true });
  const children = [gateway];
  const stack = {
    env,
    gateway,
    url: `http://127.0.0.1:${env.PORT}`,
    gatewayMetricsUrl: `http://127.0.0.1:${env.METRICS_PORT}`,
    workerUrl: `http://127.0.0.1:${env.WORKER_METRICS_PORT}`,
    worker: null,
    async startWorker(extra = {}) {
      const worker = runApp('worker', { ...env, ...workerEnv, ...extra }, { quiet: !process.env.BENCH_VERBOSE });
      children.push(worker);
      stack.worker = worker;
      await waitReady(`${stack.workerUrl}/readyz`, worker, 'worker');
      return worker;
    },
    async stopWorker() {
      await stopProcess(stack.worker, 30000);
      stack.worker = null;
    },
    async stop() {
      await Promise.all(children.map((c) => stopProcess(c, 20000)));
      await infra.stop();
    },
  };
  await waitReady(`${stack.url}/readyz`, gateway, 'gateway');
  if (startWorker) await stack.startWorker();
  s.done();
  return stack;
}

/** Sends `total` requests at `rate` per second, open loop (a slow answer does not slow the sender). */
async function paced(rate, total, send) {
  const started = performance.now();
  const inflight = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(send(i));
  }
  const results = await Promise.all(inflight);
  return { results, seconds: (performance.now() - started) / 1000 };
}

function percentiles(values, ps = [50, 95, 99, 99.9]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return Object.fromEntries(ps.map((p) => [`p${p}`, Number(at(p).toFixed(1))]));
}

// The load generator shares the 2 cores with everything it measures: node:http with a keep-alive pool costs
// far less CPU per request than fetch, so more of the machine is left to the system under test.
const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

/** POSTs a New Plant; resolves with the status and body once the whole response is read. */
function postPlant(url, plant, headers = {}, path = '/plant/webhook') {
  const body = JSON.stringify(plant);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const table = (rows) => console.table(rows);

/**
 * CPU used by each part of the stack between cpuMeter() and read(), in % of one core, from /proc (Linux only:
 * elsewhere read() returns null). The machine is shared by all of them, so this says where the cores went.
 */
function cpuMeter(pids) {
  const fs = require('node:fs');
  const TICKS = 100; // USER_HZ on Linux
  const byPid = new Map([...Object.entries(pids).map(([name, pid]) => [pid, name]), [process.pid, 'bench (load + receiver)']]);
  /** Whose the process is, from its stat line (read once per process per snapshot), or null if none of ours. */
  const owner = (pid, stat) => {
    if (byPid.has(pid)) return byPid.get(pid);
    if (stat.includes('(postgres)')) return 'postgresql';
    if (stat.includes('(java)') && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka')) return 'kafka';
    return null;
  };
  const snapshot = () => {
    const ticks = {};
    let pidsNow;
    try {
      pidsNow = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
    } catch {
      return null;
    }
    for (const pid of pidsNow) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const name = owner(pid, stat);
        if (!name) continue;
        const fields = stat.split(') ')[1].split(' ');
        ticks[name] = (ticks[name] ?? 0) + Number(fields[11]) + Number(fields[12]); // utime + stime
      } catch {
        // exited meanwhile
      }
    }
    return { at: performance.now(), ticks };
  };
  const start = snapshot();
  return {
    read() {
      const end = snapshot();
      if (!start || !end) return null;
      const seconds = (end.at - start.at) / 1000;
      return Object.fromEntries(
        Object.keys(end.ticks).sort().map((k) => [k, Math.round((100 * (end.ticks[k] - (start.ticks[k] ?? 0))) / TICKS / seconds)]),
      );
    },
  };
}

/** A histogram from a /metrics page: cumulative count per bucket bound, summed over its label sets. */
async function scrapeHistogram(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map();
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const le = /le="([^"]+)"/.exec(m[1])[1];
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[2]));
  }
  return buckets;
}

/**
 * Percentiles (ms) of what a histogram observed between two scrapes, interpolated within buckets as
 * Prometheus' histogram_quantile does: approximate, to the width of a bucket.
 */
function histogramPercentiles(before, after, ps = [50, 95, 99]) {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => after.get(b) - (before.get(b) ?? 0));
  const total = counts[counts.length - 1];
  const at = (p) => {
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
function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** Runs a benchmark's main, printing a failure and exiting non-zero. */
function runBench(main) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { startStack, paced, percentiles, postPlant, table, scrapeHistogram, histogramPercentiles, cpuMeter, arg, runBench, TOKEN, ADMIN };
