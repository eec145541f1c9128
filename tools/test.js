#!/usr/bin/env node
// @ts-check
// `npm test`: installs what is missing, builds, type-checks, brings up its own Kafka and PostgreSQL on test
// ports (so a running `npm start` is not disturbed), runs the unit and end-to-end jest projects, then tears
// down what it started, also when interrupted (Ctrl-C, SIGTERM).
// Extra arguments go to jest, e.g. `npm test -- --selectProjects unit` or `npm test -- test/webhook`.
const { spawn } = require('node:child_process');
const { ensureDependencies, build, typecheck, lint, ensureChromium } = require('./local-stack/deps');
const { ROOT } = require('./local-stack/paths');

async function main() {
  ensureDependencies();
  // The crash tests run the built apps as separate processes (to signal them), and CI checks the build.
  build();
  typecheck();
  lint();
  const chromium = ensureChromium();
  const { bringUp } = require('./local-stack');
  const { step } = require('./local-stack/progress');
  const stack = await bringUp('test');
  let jest = null;
  let interrupted = false;
  const interrupt = (signal) => {
    interrupted = true;
    if (jest) jest.kill(signal);
  };
  process.on('SIGINT', () => interrupt('SIGINT'));
  process.on('SIGTERM', () => interrupt('SIGTERM'));

  let status;
  try {
    const s = step('Running jest (unit, then end-to-end against the real broker and database)');
    // One suite at a time: the end-to-end suites share one broker and one database on a 2-core machine.
    jest = spawn('npx', ['jest', '--runInBand', ...process.argv.slice(2)], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...stack.env, KAFKAJS_NO_PARTITIONER_WARNING: '1', CHROMIUM_PATH: chromium },
    });
    status = await new Promise((resolve) => jest.once('exit', (code) => resolve(code ?? 1)));
    s.done(interrupted ? 'interrupted' : status === 0 ? 'passed' : `failed with exit code ${status}`);
  } finally {
    await stack.stop();
  }
  process.exit(interrupted ? 130 : status);
}

main().catch((err) => {
  console.error(err.stack || err.message);
  process.exit(1);
});
