#!/usr/bin/env node
// @ts-check
// `npm run chaos`, `npm run bench:*`, `npm run fuzz`: TypeScript scripts run with ts-node, which is a dev
// dependency. On a fresh clone node_modules is not there yet, so install it first (as npm start and npm test
// do), then run the script with the project's path aliases, passing every argument on.
const { spawn } = require('node:child_process');
const { ensureDependencies } = require('./local-stack/deps');
const { ROOT } = require('./local-stack/paths');

const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error('usage: node tools/run-ts.js <script.ts> [arguments]');
  process.exit(2);
}
ensureDependencies();
const child = spawn(
  process.execPath,
  [
    '-r',
    require.resolve('ts-node/register/transpile-only', { paths: [ROOT] }),
    '-r',
    require.resolve('tsconfig-paths/register', { paths: [ROOT] }),
    script,
    ...args,
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
// A terminal's Ctrl-C reaches the script too (same process group): it tears down what it started, and this
// wrapper waits for that instead of returning the prompt in the middle of it. SIGTERM is passed on.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
// `npm run` does not pass a SIGTERM on: npm exits and this process, reparented, ran on with everything the script
// started (issue #34: an interrupted fuzz run left its stack running). The parent going away is taken as the
// signal it did not pass on.
const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(orphaned);
  child.kill('SIGTERM');
}, 500);
orphaned.unref();
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
