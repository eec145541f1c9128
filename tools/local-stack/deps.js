// @ts-check
// `npm start` / `npm test` on a fresh clone: install dependencies when node_modules is missing or stale. This and
// what it needs (paths.js, progress.js) are JavaScript: they run before npm ci installs TypeScript, which
// typescript.js then loads.
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

module.exports = { ensureDependencies };
