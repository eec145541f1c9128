#!/usr/bin/env node
// @ts-check
// `npx plant-store …` (the package's `bin`, which has to be JavaScript). The CLI itself is TypeScript, main.ts,
// typed against the client generated from the API's document; this loads it with ts-node, transpiling only (the
// types are checked by `npx tsc`, not on every run), and resolves the @app/* aliases of tsconfig.json. Both are
// dev dependencies: from a fresh clone, `npm ci` (or a first `npm start`) installs them.
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');

// What the CLI needs at run time, looked for before anything is loaded: one line saying what to do, not a stack.
const missing = ['ts-node', 'typescript', 'tsconfig-paths', 'commander', 'openapi-fetch'].filter((name) => {
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

const tsNode = require('ts-node');
const tsconfigPaths = require('tsconfig-paths');
const project = path.join(ROOT, 'tsconfig.json');
tsNode.register({ project, transpileOnly: true });
const config = tsconfigPaths.loadConfig(ROOT);
if (config.resultType === 'failed') throw new Error(`${project}: ${config.message}`);
tsconfigPaths.register({ baseUrl: config.absoluteBaseUrl, paths: config.paths, addMatchAll: false });

require(path.join(__dirname, 'main'));
