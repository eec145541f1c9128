// Once dependencies are installed (deps.js): the build, the type-check and lint that `npm test` runs first, and
// the Chromium its browser tests drive.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths';
import { info, step } from './progress';

/** What the build reads: a change to any of these (or a file added or removed) makes dist/ stale. */
const BUILD_INPUTS = ['apps', 'libs', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'];
/** What it makes, each checked to be there before a build is skipped. */
const BUILD_OUTPUTS = [
  'dist/apps/gateway/apps/gateway/src/main.js',
  'dist/apps/worker/apps/worker/src/main.js',
  'dist/console/index.html',
];
/** The inputs' fingerprint the last successful build started from. */
const STAMP = path.join(ROOT, 'dist', '.build-inputs');

/** Every input file's path, size and modification time, hashed: cheap next to a build (about 25 s here). */
function inputsFingerprint(): string {
  const hash = createHash('sha256');
  const visit = (rel: string) => {
    const stat = fs.statSync(path.join(ROOT, rel), { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(path.join(ROOT, rel)).sort())
        if (name !== 'node_modules') visit(path.join(rel, name));
    } else hash.update(`${rel}\0${stat.size}\0${stat.mtimeMs}\n`);
  };
  BUILD_INPUTS.forEach(visit);
  return hash.digest('hex');
}

export async function build(): Promise<void> {
  const fingerprint = inputsFingerprint();
  const built = fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === fingerprint;
  if (built && BUILD_OUTPUTS.every((f) => fs.existsSync(path.join(ROOT, f)))) {
    info('Gateway, worker and console already built from these sources: not building again');
    return;
  }
  fs.rmSync(STAMP, { force: true });
  // From an empty folder: a file the sources no longer have would otherwise stay, and be loaded. A statement file
  // left by a newer build (retention/retention.sql) was what an older build's `require('./retention.sql')` found
  // first, as JavaScript: its worker did not start.
  fs.rmSync(path.join(ROOT, 'dist', 'apps'), { recursive: true, force: true });
  const s = step('Building gateway, worker and console');
  // The three at once: each writes a folder of its own (dist/apps/gateway, dist/apps/worker, dist/console), and
  // each is one process mostly on one core, so on 2 cores together they take about as long as the longest two.
  const builds = [
    ['nest', 'build', 'gateway'],
    ['nest', 'build', 'worker'],
    // The operator console: static files the gateway serves at /console.
    ['vite', 'build', '--config', 'apps/console/vite.config.mts', '--logLevel', 'warn'],
  ];
  const codes = await Promise.all(builds.map((args) => run('npx', args)));
  const failed = builds.filter((_, i) => codes[i] !== 0).map((args) => args.slice(0, 3).join(' '));
  if (failed.length > 0) throw new Error(`build failed: ${failed.join(', ')}`);
  fs.writeFileSync(STAMP, fingerprint);
  s.done();
}

/** A command's exit code, its output passed through. */
const run = (command: string, args: string[]) =>
  new Promise<number>((resolve, reject) =>
    spawn(command, args, { cwd: ROOT, stdio: 'inherit' })
      .once('error', reject)
      .once('exit', (code) => resolve(code ?? 1)),
  );

/** jest transpiles without type-checking, so the tests' own types are checked here, once. */
export async function typecheck(): Promise<void> {
  // tsconfig.json also checks the JavaScript that runs before npm ci (allowJs, and // @ts-check in each file).
  for (const project of ['tsconfig.json', 'apps/console/tsconfig.json'])
    if ((await run('npx', ['tsc', '--noEmit', '-p', project])) !== 0) throw new Error(`type errors (${project})`);
}

/** ESLint and Prettier, zero warnings (`npm run format` fixes what can be fixed). */
export async function lint(): Promise<void> {
  if ((await run('npm', ['run', '--silent', 'lint'])) !== 0)
    throw new Error('lint failed: run `npm run format`, then fix what is left');
}

/** Both at once: each runs on one core, and they read the same files. */
export async function typecheckAndLint(): Promise<void> {
  const s = step('Type-checking apps, libs, tests and launchers; linting (ESLint, Prettier)');
  const [types, style] = await Promise.allSettled([typecheck(), lint()]);
  for (const r of [types, style]) if (r.status === 'rejected') throw r.reason;
  s.done();
}

/** Where the browser tests find Chromium (Debian's package: Playwright cannot download browsers here). */
const CHROMIUM = '/usr/bin/chromium';
const HOW =
  "install Debian's package (sudo apt-get install -y chromium), or set CHROMIUM_PATH to another Chromium binary";

/**
 * The browser tests drive a real Chromium: CHROMIUM_PATH when set, else Debian's, installed with apt-get when
 * missing and we are root. Otherwise npm test stops here and says how: never a silent skip.
 */
export function ensureChromium(): string {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen) {
    if (!fs.existsSync(chosen)) throw new Error(`CHROMIUM_PATH=${chosen} does not exist: ${HOW}`);
    return chosen;
  }
  if (fs.existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) throw new Error(`the browser tests need Chromium at ${CHROMIUM}: ${HOW}`);
  const s = step('Installing Chromium for the browser tests (apt-get, first run only)');
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'ignore' });
  let r = install();
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    r = install();
  }
  if (r.status !== 0 || !fs.existsSync(CHROMIUM)) throw new Error(`apt-get could not install chromium: ${HOW}`);
  s.done();
  return CHROMIUM;
}
