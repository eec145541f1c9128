#!/usr/bin/env node
// `npm test`: installs what is missing, brings up its own Kafka and PostgreSQL on test ports (so a running
// `npm start` is not disturbed), runs the unit and end-to-end jest projects, then tears down what it started.
// Extra arguments go to jest, e.g. `npm test -- --selectProjects unit` or `npm test -- test/webhook`.
const { spawnSync } = require('node:child_process');
const { ensureDependencies, build, typecheck, ROOT } = require('./infra/deps');

async function main() {
  ensureDependencies();
  // The crash tests run the built worker as a separate process (to SIGKILL it), and CI checks the build.
  build();
  typecheck();
  const { bringUp } = require('./infra');
  const { step } = require('./infra/progress');
  const infra = await bringUp('test');
  let status = 1;
  const stop = async () => {
    await infra.stop();
  };
  process.on('SIGINT', () => void stop().then(() => process.exit(130)));
  try {
    const s = step('Running jest (unit, then end-to-end against the real broker and database)');
    // One suite at a time: the end-to-end suites share one broker and one database on a 2-core machine.
    const r = spawnSync('npx', ['jest', '--runInBand', ...process.argv.slice(2)], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...infra.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
    });
    status = r.status ?? 1;
    s.done(status === 0 ? 'passed' : `failed with exit code ${status}`);
  } finally {
    await stop();
  }
  process.exit(status);
}

main().catch((err) => {
  console.error(err.stack || err.message);
  process.exit(1);
});
