// The load generators of bench:gateway, closed loop (each connection sends its next request once the answer to
// the last one came): wrk (a C program, Debian package `wrk`, driven by wrk-webhooks.lua) when it can be found,
// else autocannon (in this process, JavaScript). Both send each New Plant with a plant id of its own and, `keyed`,
// a webhook-id of its own.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { info, step, TOKEN } from './harness';

export interface LoadResult {
  generator: string;
  'req/s': number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  errors: number;
  requests: number;
}

export interface LoadOptions {
  connections: number;
  duration: number;
  /** Each webhook with its own webhook-id (a new idempotency key on every request). */
  keyed?: boolean;
  /** wrk threads (1 by default); ignored by autocannon, which is one thread. */
  threads?: number;
  /** Where the plant ids (and webhook-ids) of this run start: runs that must not share keys use different bases. */
  idBase?: number;
}

export type Generator = 'wrk' | 'autocannon';

/**
 * wrk's path: $WRK, else `wrk` on the PATH; when neither, and this runs as root where apt-get exists (a Debian
 * or Ubuntu container), it installs Debian's `wrk` package. Null when there is none (the caller falls back to
 * autocannon and says so).
 */
export function locateWrk(): string | null {
  const runs = (bin: string) => !spawnSync(bin, ['--version'], { stdio: 'ignore' }).error;
  const candidate = process.env.WRK || 'wrk';
  if (runs(candidate)) return candidate;
  if (process.getuid?.() === 0 && runs('apt-get')) {
    const s = step('Installing wrk, the load generator (apt-get install wrk)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
    spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'ignore', env });
    s.done();
    if (runs('wrk')) return 'wrk';
  }
  info(
    'wrk not found (set WRK=/path/to/wrk, or install it: apt-get install wrk, brew install wrk): using autocannon, ' +
      'a generator in this process, which on a 2-core machine may itself be the limit of the baselines',
  );
  return null;
}

export function load(generator: Generator, url: string, options: LoadOptions): Promise<LoadResult> {
  return generator === 'wrk' ? wrkLoad(url, options) : autocannonLoad(url, options);
}

async function wrkLoad(url: string, o: LoadOptions): Promise<LoadResult> {
  const threads = Math.min(o.threads ?? 1, o.connections);
  const args = ['-t', String(threads), '-c', String(o.connections), '-d', `${o.duration}s`, '--timeout', '10s'];
  const child = spawn(
    process.env.WRK || 'wrk',
    [...args, '-s', path.join(__dirname, 'wrk-webhooks.lua'), `${url}/plant/webhook`],
    {
      env: {
        ...process.env,
        BENCH_TOKEN: TOKEN,
        BENCH_KEYED: o.keyed ? '1' : '0',
        BENCH_ID_BASE: String(o.idBase ?? 5e12),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const line = /^WRK_JSON (.*)$/m.exec(out);
  if (code !== 0 || !line) throw new Error(`wrk exited with ${code}:\n${out}`);
  const r = JSON.parse(line[1]) as Record<'requests' | 'durationUs' | 'non2xx' | 'errors' | 'p50Us' | 'p99Us', number>;
  return {
    generator: `wrk -t${threads} -c${o.connections}`,
    'req/s': Math.round(r.requests / (r.durationUs / 1e6)),
    p50ms: Number((r.p50Us / 1000).toFixed(1)),
    p99ms: Number((r.p99Us / 1000).toFixed(1)),
    non2xx: r.non2xx,
    errors: r.errors,
    requests: r.requests,
  };
}

async function autocannonLoad(url: string, o: LoadOptions): Promise<LoadResult> {
  let n = 0;
  const base = o.idBase ?? 5e12;
  const r = await autocannon({
    url: `${url}/plant/webhook`,
    method: 'POST',
    connections: o.connections,
    duration: o.duration,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const id = base + n++;
          const headers = o.keyed ? { ...req.headers, 'webhook-id': `msg_bench_${id}` } : req.headers;
          return { ...req, headers, body: JSON.stringify({ id, name: 'Ficus', tag: 'indoor' }) };
        },
      },
    ],
  });
  return {
    generator: `autocannon -c${o.connections}`,
    'req/s': Math.round(r.requests.average),
    p50ms: r.latency.p50,
    p99ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    requests: r.requests.total,
  };
}
