// `npm run fuzz`: generated requests against the running stack (its own Kafka and PostgreSQL unless KAFKA_BROKERS /
// DATABASE_URL name them, the built gateway and worker as processes). Prints progress every few seconds, a
// summary at the end, and exits non-zero on any finding. A finding re-runs with the seed the run prints.
//   npm run fuzz                                 100,000 requests, a random seed
//   npm run fuzz -- --requests 5000 --seed 42    a short run, again exactly as before (harvested ids aside)
//   npm run fuzz -- --no-build                   skip the build (the apps in dist/ are current)
import path from 'node:path';
import { build } from '../local-stack/build';
import { info, step } from '../local-stack/progress';
import { stopEverythingOnInterrupt } from '../local-stack/supervisor';
import { fuzz, FuzzOptions, printReport } from './fuzzer';
import { LOG_DIR, startFuzzStack } from './stack';

/** The options of a full run; `npm test` runs a short profile of them (test/faults/fuzz.e2e-spec.ts). */
export const FULL: Omit<FuzzOptions, 'seed' | 'log'> = {
  requests: 100_000,
  concurrency: 16,
  promptMs: 10_000,
  deadlineMs: 20_000,
  maxRssMb: 300,
  settleMs: 60_000,
  progressMs: 5_000,
};

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  stopEverythingOnInterrupt('the fuzzer');
  const seed = Number(arg('seed') ?? Math.floor(Math.random() * 2 ** 31));
  const options: FuzzOptions = {
    ...FULL,
    requests: Number(arg('requests') ?? FULL.requests),
    concurrency: Number(arg('concurrency') ?? FULL.concurrency),
    maxRssMb: Number(arg('max-rss-mb') ?? FULL.maxRssMb),
    seed,
    findingsFile: path.join(LOG_DIR, 'findings.jsonl'),
    log: info,
  };
  if (!process.argv.includes('--no-build')) await build();
  const s = step('Starting the stack (worker, then gateway)');
  const stack = await startFuzzStack();
  s.done();
  info(`Seed ${seed}: re-run with  npm run fuzz -- --seed ${seed} --requests ${options.requests}`);
  let passed: boolean;
  try {
    const report = await fuzz(stack.target, options);
    printReport(report);
    for (const name of report.crashed)
      info(`${name} exited; its last lines:\n${stack.logTail(name as 'gateway' | 'worker')}`);
    if (!report.passed)
      info(`Findings in full (with each request's bytes, base64): ${path.join(LOG_DIR, 'findings.jsonl')}`);
    info(`Seed ${seed}: re-run with  npm run fuzz -- --seed ${seed} --requests ${options.requests}`);
    passed = report.passed;
  } finally {
    await stack.stop();
  }
  process.exit(passed ? 0 : 1);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
