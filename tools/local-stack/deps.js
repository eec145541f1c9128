// @ts-check
// `npm start` / `npm test` on a fresh clone: install dependencies when node_modules is missing or stale.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./paths');
const { step, info } = require('./progress');

function ensureDependencies() {
  const modules = path.join(ROOT, 'node_modules');
  const marker = path.join(modules, '.package-lock.json');
  const lock = path.join(ROOT, 'package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs - 1000) return;
  // A git worktree that links node_modules to another checkout's: a checkout or rebase makes package-lock.json
  // look newer, and npm ci here would first empty the linked folder for every checkout that shares it (seen:
  // twice in one afternoon). Leave it to whoever owns it, and say so.
  if (fs.existsSync(modules) && fs.lstatSync(modules).isSymbolicLink()) {
    if (fs.existsSync(marker)) {
      info(`node_modules links to ${fs.realpathSync(modules)}: not reinstalling it (run npm ci there if it is stale)`);
      return;
    }
    throw new Error(`node_modules links to ${fs.readlinkSync(modules)}, which has no installed dependencies`);
  }
  const s = step('Installing dependencies (npm ci)');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm ci failed');
  s.done();
}

function build() {
  const s = step('Building gateway, worker and console');
  const r = spawnSync('npx', ['nest', 'build', 'gateway'], { cwd: ROOT, stdio: 'inherit' });
  const w = r.status === 0 ? spawnSync('npx', ['nest', 'build', 'worker'], { cwd: ROOT, stdio: 'inherit' }) : r;
  // The operator console: static files the gateway serves at /console.
  const c =
    w.status === 0
      ? spawnSync('npx', ['vite', 'build', '--config', 'apps/console/vite.config.mts', '--logLevel', 'warn'], {
          cwd: ROOT,
          stdio: 'inherit',
        })
      : w;
  if (c.status !== 0) throw new Error('build failed');
  s.done();
}

/** jest transpiles without type-checking, so the tests' own types are checked here, once. */
function typecheck() {
  const s = step('Type-checking apps, libs, tests and launchers');
  // The launchers' JavaScript (// @ts-check, it runs before npm ci) is checked too: tsconfig.tools.json.
  for (const project of ['tsconfig.json', 'tsconfig.tools.json', 'apps/console/tsconfig.json']) {
    const r = spawnSync('npx', ['tsc', '--noEmit', '-p', project], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`type errors (${project})`);
  }
  s.done();
}

/** ESLint and Prettier, zero warnings (`npm run format` fixes what can be fixed). */
function lint() {
  const s = step('Linting (ESLint, Prettier)');
  const r = spawnSync('npm', ['run', '--silent', 'lint'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('lint failed: run `npm run format`, then fix what is left');
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
function ensureChromium() {
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

module.exports = { ensureDependencies, build, typecheck, lint, ensureChromium };
