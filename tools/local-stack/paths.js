// @ts-check
// Where things are, defined once for every launcher and benchmark.
const path = require('node:path');

/** The repository root. */
const ROOT = path.resolve(__dirname, '../..');
/** Git-ignored local data: the broker's jars and logs, PostgreSQL's data folders. */
const LOCAL = path.join(ROOT, '.local');

module.exports = { ROOT, LOCAL };
