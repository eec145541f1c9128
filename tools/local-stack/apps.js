// @ts-check
// Runs the built gateway and worker as child processes, their JSON logs prefixed with the app name.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { ROOT } = require('./paths');
const { stopProcess, waitFor } = require('./processes');

/** The built app's entry point (what `npm run build` produces), for the launchers and the tests. */
function builtAppEntry(app, entry = 'main') {
  const file = path.join(ROOT, 'dist/apps', app, 'apps', app, 'src', `${entry}.js`);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: the build did not produce the ${app}`);
  return file;
}

// APP_NODE_ARGS adds node flags to both apps, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a benchmark
// (NODE_OPTIONS refuses --cpu-prof).
const extraArgs = (process.env.APP_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** `entry`: another entry point of the app than main, e.g. the worker's 'setup/main'. */
function runApp(app, env, { quiet = false, entry = 'main' } = {}) {
  const child = spawn(process.execPath, ['--enable-source-maps', ...extraArgs, builtAppEntry(app, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => {
      if (!quiet) process.stdout.write(`${app.padEnd(7)} | ${line}\n`);
    });
  }
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

module.exports = { runApp, waitReady, stopProcess, builtAppEntry };
