// Runs the built gateway and worker as child processes, their JSON logs prefixed with the app name.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { ROOT } from './paths';
import { trackSpawned, waitFor } from './processes';
import { Supervised } from './supervisor';

export { stopProcess } from './processes';

export type App = 'gateway' | 'worker';

/** The built app's entry point (what `npm run build` produces), for the launchers and the tests. */
export function builtAppEntry(app: App, entry = 'main'): string {
  const file = path.join(ROOT, 'dist/apps', app, 'apps', app, 'src', `${entry}.js`);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: the build did not produce the ${app}`);
  return file;
}

// APP_NODE_ARGS adds node flags to both apps, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a benchmark
// (NODE_OPTIONS refuses --cpu-prof).
const extraArgs = (process.env.APP_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * Node flags each app always runs with (the Dockerfile's CMD gives the same; test/static checks it). The gateway:
 * V8's young generation at 2 MB semi-spaces instead of its default 16 MB, which an idle gateway grew to (~28 MB
 * of its RSS); what a webhook allocates dies within its request, so small scavenges cost little. And its old
 * generation capped at 128 MB: under bench:gateway's 100,000 webhook-ids V8 grew it to ~200 MB (252 MB peak RSS)
 * around a live set under 100 MB; capped, it collects sooner (133 MB peak RSS; docs/benchmarks.md).
 * The worker: its old generation capped at 160 MB. A delivery lives from its fan-out to its record (hundreds of
 * ms under load), long enough to be promoted, so the old generation fills with dead deliveries between
 * collections; uncapped, V8 let it reach ~120 MB of 160 MB allocated (245–293 MB peak RSS at 6,000 deliveries/s)
 * around a live set of 40–70 MB; capped, 175–179 MB at 6,000 and 10,000 deliveries/s offered, for 5–15 % more
 * worker CPU per delivery (docs/benchmarks.md).
 */
export const appNodeFlags = (app: App): string[] =>
  app === 'gateway' ? ['--max-semi-space-size=2', '--max-old-space-size=128'] : ['--max-old-space-size=160'];

/**
 * `entry`: another entry point of the app than main, e.g. the worker's 'setup/main'. `label`: the prefix of its
 * lines when several run (gateway-1, gateway-2).
 */
export function runApp(
  app: App,
  env: Record<string, string>,
  {
    quiet = false,
    entry = 'main',
    label = app as string,
    logFile,
  }: { quiet?: boolean; entry?: string; label?: string; logFile?: string } = {},
): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', ...appNodeFlags(app), ...extraArgs, builtAppEntry(app, entry)],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  trackSpawned(child); // an interrupted script stops it with its broker and database
  // logFile: its lines go to that file instead of the terminal (the fault suite keeps one per process).
  const file = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream! }).on('line', (line) => {
      if (file) file.write(`${line}\n`);
      else if (!quiet) process.stdout.write(`${label.padEnd(9)} | ${line}\n`);
    });
  }
  if (file) child.once('exit', () => file.end());
  return child;
}

export async function waitReady(url: string, child: ChildProcess, what: string, timeoutMs = 60000): Promise<void> {
  await waitFor(
    `${what} to be ready (${url})`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
      const res = await fetch(url).catch(() => null);
      return res !== null && res.ok;
    },
    { timeoutMs, intervalMs: 300 },
  );
}

/**
 * The app as a supervised process (supervisor.js), ready when `readyUrl` answers 2xx. With `restart`, it is
 * started again with back-off when it exits on its own (npm start); the fault suite restarts it by hand.
 */
export function appService(
  app: App,
  env: Record<string, string>,
  {
    readyUrl,
    label = app,
    quiet = false,
    restart = false,
    owner,
    logFile,
    stopTogether,
    readyTimeoutMs = 120000, // the gateway waits up to 60 s for the schema and topics
  }: {
    readyUrl: string;
    readyTimeoutMs?: number;
    label?: string;
    quiet?: boolean;
    restart?: boolean;
    owner?: string;
    logFile?: string;
    /** Stopped at once with the other services that share it (supervisor.ts), not one after the other. */
    stopTogether?: string;
  },
): Supervised {
  return new Supervised(label, {
    owner,
    restart,
    stopTogether,
    readyTimeoutMs,
    stopGraceMs: 30000,
    spawn: () => runApp(app, env, { quiet, label, logFile }),
    ready: async () => {
      const res = await fetch(readyUrl).catch(() => null);
      return res !== null && res.ok;
    },
  });
}
