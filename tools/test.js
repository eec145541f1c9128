#!/usr/bin/env node
// @ts-check
// `npm test`: installs what is missing, builds, type-checks, brings up its own Kafka and PostgreSQL on test
// ports (so a running `npm start` is not disturbed), runs the unit and end-to-end jest projects, then tears
// down what it started, also when interrupted (Ctrl-C, SIGTERM).
//
// Two Node versions: the whole suite runs on the supported LTS the Docker image ships (Node 24, fetched from the
// npm registry into .local/ on first use); when this machine's Node is another major (these machines have
// Node 20, past its end of life), the unit tests and the core end-to-end suites run again on it, since
// `npm start` runs the apps on it. In that order: on the LTS the suites that can run beside others (three at a
// time), then this machine's Node, then on the LTS the suites that need the stack alone (each says so with `// @alone: why`, which
// jest.config.js reads).
//
// Extra arguments go to jest, e.g. `npm test -- --selectProjects unit` or `npm test -- test/gateway/` (the suites
// of one area, test/<area>/); they run on the LTS only, one at a time. `npm test -- --node=machine` runs on this
// machine's Node alone (no fetch). `npm test -- --workers=3 test/delivery/` runs the given suites three at a time, as
// the parallel lane does (with E2E_LANE=parallel in the environment, jest leaves out the suites tagged @alone).
const { execFileSync, spawn } = require('node:child_process');
const { ensureDependencies } = require('./local-stack/deps');
const { registerTypeScript } = require('./local-stack/typescript');
const { ROOT } = require('./local-stack/paths');

/**
 * Suites at once in the parallel lane. Three on 2 cores: the end-to-end suites mostly wait (for a broker's
 * rebalance, a retry's backoff, a fault to heal). Four (with the fault suite among them) kept the CPU busy and made
 * timing-bound suites and specs fail one fresh clone in two. The fault suite is one of the three, first: alone after
 * the lane it added its whole 200 s; in it the lane grew by ~80 s, and vmstat showed the CPU 25-60 % idle.
 */
const PARALLEL_LANE_WORKERS = 3;

/** What the machine's own Node runs again after the full suite on the LTS: what `npm start` exercises. */
const MACHINE_NODE_SUITES = ['test/kafka/pipeline.e2e-spec.ts', 'test/tools/walkthrough.e2e-spec.ts'];

async function main() {
  const args = process.argv.slice(2);
  const machineOnly = args.includes('--node=machine');
  const workersArg = args.find((a) => a.startsWith('--workers='));
  const workers = workersArg ? Number(workersArg.slice('--workers='.length)) : 1;
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`${workersArg}: give a whole number of workers`);
  const jestArgs = args.filter((a) => !a.startsWith('--node=') && !a.startsWith('--workers='));
  ensureDependencies();
  registerTypeScript(); // the rest of the launcher is TypeScript
  const { build, typecheckAndLint, ensureChromium } = require('./local-stack/build');
  const { ensureNodeLts, NODE_LTS_MAJOR } = require('./local-stack/node-lts');
  // The crash tests run the built apps as separate processes (to signal them), and CI checks the build.
  await build();
  await typecheckAndLint();
  // One after another: fetched beside the build (tried), they took the cores from it and saved ~2 s.
  const chromium = ensureChromium();
  const lts = machineOnly ? process.execPath : ensureNodeLts();
  const { bringUp } = require('./local-stack');
  const { step } = require('./local-stack/progress');
  const stack = await bringUp('test');
  /** @type {import('node:child_process').ChildProcess | null} */
  let jest = null;
  let interrupted = false;
  const interrupt = (/** @type {NodeJS.Signals} */ signal) => {
    interrupted = true;
    if (jest) jest.kill(signal);
  };
  process.on('SIGINT', () => interrupt('SIGINT'));
  process.on('SIGTERM', () => interrupt('SIGTERM'));

  /**
   * One jest run. The end-to-end suites share one broker and one database on 2 cores: PARALLEL_LANE_WORKERS at a
   * time (`parallel`, the suites that keep to their own ids, groups, databases and ports) or one at a time
   * (`serial`, the rest: each says why with `// @alone:` near its top, which jest.config.js reads). Unset, one at
   * a time, every suite.
   * @param {string} node @param {string} what @param {string[]} extra
   * @param {{ lane?: 'parallel' | 'serial', workers?: number }} [how]
   */
  const runJest = async (
    node,
    what,
    extra,
    { lane, workers = lane === 'parallel' ? PARALLEL_LANE_WORKERS : 1 } = {},
  ) => {
    const s = step(`Running jest on Node ${version(node)}: ${what}`);
    // --forceExit: a suite that failed half-way can leave a client or a server open, and jest then waits for it
    // for ever after printing its results; CI would wait out its whole time limit instead of reporting the failure.
    const jestBin = require.resolve('jest/bin/jest', { paths: [ROOT] });
    const inWorkers = workers > 1 ? [`--maxWorkers=${workers}`] : ['--runInBand'];
    jest = spawn(node, [jestBin, ...inWorkers, '--forceExit', ...extra], {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...process.env,
        ...stack.env,
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        // Transpile only: typecheckAndLint() above has type-checked every file jest loads (apps, libs, tests and
        // tools, one tsc program); ts-jest checking them again cost each suite seconds of its own.
        TS_JEST_TRANSPILE_ONLY: '1',
        CHROMIUM_PATH: chromium,
        ...(lane ? { E2E_LANE: lane } : {}),
      },
    });
    const status = await new Promise((resolve) => jest?.once('exit', (code) => resolve(code ?? 1)));
    s.done(interrupted ? 'interrupted' : status === 0 ? 'passed' : `failed with exit code ${status}`);
    return status;
  };

  const machineMajor = Number(process.versions.node.split('.')[0]);
  const onMachineNodeToo = !machineOnly && jestArgs.length === 0 && machineMajor !== NODE_LTS_MAJOR;
  let status;
  try {
    if (jestArgs.length > 0) status = await runJest(lts, jestArgs.join(' '), jestArgs, { workers });
    else {
      const what = `unit, static and end-to-end, ${PARALLEL_LANE_WORKERS} at a time`;
      const parallel = await runJest(lts, what, [], { lane: 'parallel' });
      // This machine's Node before the serial lane, so that a failure of the apps on it shows before the long
      // suites. (Its core suites run on topics and a database of their own, so what the serial lane's suites
      // write, the dead-letter burst's 20,000 poison records on the shared plant.created among them, is not theirs.)
      let machine = 0;
      if (parallel === 0 && !interrupted && onMachineNodeToo) {
        // The unit tests beside the first core suite, two at a time; the core suites share the database: one at
        // a time.
        const [first, ...rest] = MACHINE_NODE_SUITES;
        const what = "unit and the core end-to-end suites, on this machine's Node";
        machine = await runJest(process.execPath, what, [first, 'apps/', 'libs/'], { workers: 2 });
        if (machine === 0 && !interrupted) machine = await runJest(process.execPath, what, rest);
      }
      // Run either way: one run reports every failure.
      const serial = interrupted
        ? 1
        : await runJest(lts, 'the end-to-end suites that need the stack alone', ['--selectProjects', 'e2e'], {
            lane: 'serial',
          });
      status = parallel || machine || serial;
    }
  } finally {
    await stack.stop();
  }
  process.exit(interrupted ? 130 : status);
}

/** @param {string} node */
const version = (node) =>
  node === process.execPath
    ? process.versions.node
    : execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().slice(1);

main().catch((err) => {
  console.error(err.stack || err.message);
  process.exit(1);
});
