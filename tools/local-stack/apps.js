// @ts-check
// Runs the built gateway and worker as child processes, their JSON logs prefixed with the app name.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { ROOT } = require('./paths');
const { stopProcess, waitFor } = require('./processes');
const { Supervised } = require('./supervisor');

/** The built app's entry point (what `npm run build` produces), for the launchers and the tests. */
function builtAppEntry(app, entry = 'main') {
  const file = path.join(ROOT, 'dist/apps', app, 'apps', app, 'src', `${entry}.js`);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: the build did not produce the ${app}`);
  return file;
}

// APP_NODE_ARGS adds node flags to both apps, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a benchmark
// (NODE_OPTIONS refuses --cpu-prof).
const extraArgs = (process.env.APP_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * `entry`: another entry point of the app than main, e.g. the worker's 'setup/main'. `label`: the prefix of its
 * lines when several run (gateway-1, gateway-2).
 */
function runApp(app, env, { quiet = false, entry = 'main', label = app, logFile = undefined } = {}) {
  const child = spawn(process.execPath, ['--enable-source-maps', ...extraArgs, builtAppEntry(app, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // logFile: its lines go to that file instead of the terminal (the fault suite keeps one per process).
  const file = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => {
      if (file) file.write(`${line}\n`);
      else if (!quiet) process.stdout.write(`${label.padEnd(9)} | ${line}\n`);
    });
  }
  if (file) child.once('exit', () => file.end());
  return child;
}

async function waitReady(url, child, what, timeoutMs = 60000) {
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
function appService(
  app,
  env,
  { readyUrl, label = app, quiet = false, restart = false, owner = undefined, logFile = undefined },
) {
  return new Supervised(label, {
    owner,
    restart,
    readyTimeoutMs: 120000, // the gateway waits up to 60 s for the schema and topics
    stopGraceMs: 30000,
    spawn: () => runApp(app, env, { quiet, label, logFile }),
    ready: async () => {
      const res = await fetch(readyUrl).catch(() => null);
      return res !== null && res.ok;
    },
  });
}

module.exports = { runApp, appService, waitReady, stopProcess, builtAppEntry };
