#!/usr/bin/env node
// @ts-check
// `npx plant-store …` (the package's `bin`, which has to be JavaScript). The CLI itself is TypeScript, main.ts and
// the command groups it registers (commands/), typed against the client generated from the API's document. This
// loads it as the launcher loads its own TypeScript (tools/local-stack/typescript.js: transpiled only, cached, the
// @app/* aliases resolved; each file as require() reaches it, so no list of files to keep up to date). The compiler
// and tsconfig-paths are dev dependencies: from a fresh clone, `npm ci` (or a first `npm start`) installs them.
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');

// What the CLI needs at run time, looked for before anything is loaded: one line saying what to do, not a stack.
const missing = ['typescript', 'tsconfig-paths', 'commander', 'openapi-fetch'].filter((name) => {
  try {
    require.resolve(name);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  process.stderr.write(`plant-store: ${missing.join(', ')} not installed: run npm ci in ${ROOT} first\n`);
  process.exit(3); // EXIT.unavailable (cli/api.ts): not set up, as when no token is set
}

require('../tools/local-stack/typescript').registerTypeScript();
require(path.join(__dirname, 'main'));
