#!/usr/bin/env node
// @ts-check
// `npm test`: installs what is missing, builds, type-checks, brings up its own Kafka and PostgreSQL on test
// ports (so a running `npm start` is not disturbed), runs the unit and end-to-end jest projects, then tears
// down what it started, also when interrupted (Ctrl-C, SIGTERM).
//
// Two Node versions: the whole suite runs on the supported LTS the Docker image ships (Node 24, fetched from the
// npm registry into .local/ on first use), then, when this machine's Node is another major (these machines have
// Node 20, past its end of life), the unit tests and the core end-to-end suites run again on it, since
// `npm start` runs the apps on it.
//
// Extra arguments go to jest, e.g. `npm test -- --selectProjects unit` or `npm test -- test/webhook`; they run on
// the LTS only. `npm test -- --node=machine` runs on this machine's Node alone (no fetch).
const { execFileSync, spawn } = require('node:child_process');
const { ensureDependencies } = require('./local-stack/deps');
const { registerTypeScript } = require('./local-stack/typescript');
const { ROOT } = require('./local-stack/paths');

/** What the machine's own Node runs again after the full suite on the LTS: what `npm start` exercises. */
const MACHINE_NODE_SUITES = ['test/pipeline.e2e-spec.ts', 'test/walkthrough.e2e-spec.ts'];

async function main() {
  const args = process.argv.slice(2);
  const machineOnly = args.includes('--node=machine');
  const jestArgs = args.filter((a) => !a.startsWith('--node='));
  ensureDependencies();
  registerTypeScript(); // the rest of the launcher is TypeScript
  const { build, typecheckAndLint, ensureChromium } = require('./local-stack/build');
  const { ensureNodeLts, NODE_LTS_MAJOR } = require('./local-stack/node-lts');
  // The crash tests run the built apps as separate processes (to signal them), and CI checks the build.
  build();
  await typecheckAndLint();
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
   * One jest run, one suite at a time: the end-to-end suites share one broker and one database on 2 cores.
   * @param {string} node @param {string} what @param {string[]} extra
   */
  const runJest = async (node, what, extra) => {
    const s = step(`Running jest on Node ${version(node)}: ${what}`);
    // --forceExit: a suite that failed half-way can leave a client or a server open, and jest then waits for it
    // for ever after printing its results; CI would wait out its whole time limit instead of reporting the failure.
    const jestBin = require.resolve('jest/bin/jest', { paths: [ROOT] });
    jest = spawn(node, [jestBin, '--runInBand', '--forceExit', ...extra], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...stack.env, KAFKAJS_NO_PARTITIONER_WARNING: '1', CHROMIUM_PATH: chromium },
    });
    const status = await new Promise((resolve) => jest?.once('exit', (code) => resolve(code ?? 1)));
    s.done(interrupted ? 'interrupted' : status === 0 ? 'passed' : `failed with exit code ${status}`);
    return status;
  };

  let status;
  try {
    status = await runJest(lts, jestArgs.length ? jestArgs.join(' ') : 'unit, then end-to-end', jestArgs);
    const machineMajor = Number(process.versions.node.split('.')[0]);
    if (status === 0 && !interrupted && !machineOnly && jestArgs.length === 0 && machineMajor !== NODE_LTS_MAJOR) {
      status = await runJest(process.execPath, "unit and the core end-to-end suites, on this machine's Node", [
        ...MACHINE_NODE_SUITES,
        'apps/',
        'libs/',
      ]);
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
