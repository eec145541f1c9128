// Two projects: unit specs live beside the code (apps/, libs/), end-to-end specs in test/ and need the
// real Kafka and PostgreSQL that tools/test.js starts (it passes their addresses through the environment).
const fs = require('node:fs');
const path = require('node:path');
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

const shared = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  transform: {
    // `npm test` (tools/test.js) and the fast loop (`npm run test:e2e`) transpile only: `npm test` type-checks the
    // whole tree with tsc before jest starts, and checking the apps' tree again took each suite seconds. A plain
    // `npx jest` still type-checks as it compiles.
    '^.+\\.ts$': process.env.TS_JEST_TRANSPILE_ONLY === '1' ? ['ts-jest', { isolatedModules: true }] : 'ts-jest',
    // The OTLP exporter loads node:http with a dynamic import(), which jest's vm refuses without
    // --experimental-vm-modules; transpiled to CommonJS it becomes a require.
    'node_modules/@opentelemetry/otlp-exporter-base/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@opentelemetry/otlp-exporter-base/)'],
};

// End-to-end suites live in test/<area>/ (static, gateway, delivery, kafka, browser…), one folder per area.
const TEST = path.join(__dirname, 'test');

// Suites that read files and schemas only (docs, manifests, the OpenAPI document): no broker, no database. They
// are the ones in test/static/. `npm run test:static` runs them in seconds; `npm test` runs them with the rest.
const STATIC = { glob: '<rootDir>/test/static/**/*.e2e-spec.ts', pattern: '<rootDir>/test/static/' };

// End-to-end suites that must have the test stack to themselves say so in their first lines, with the reason:
//   // @alone: it pauses the shared broker (SIGSTOP): every other suite's publishes would stall with it.
// `npm test` runs them one at a time after the others, which run three at a time (tools/test.js). Every other suite
// keeps to its own plant ids, consumer groups, databases and ports, so two of them at once do not see each other.
const ALONE_WITHIN_LINES = 15;
const alone = (/** @type {string} */ file) => {
  const head = fs.readFileSync(path.join(TEST, file), 'utf8').split('\n').slice(0, ALONE_WITHIN_LINES);
  const tag = head.find((line) => /^\/\/\s*@alone\b/.test(line));
  if (tag && !/^\/\/\s*@alone:\s*\S/.test(tag)) throw new Error(`test/${file}: say why, after "// @alone:"`);
  return tag !== undefined;
};
const SERIAL = fs
  .readdirSync(TEST, { recursive: true, encoding: 'utf8' })
  .map((file) => file.split(path.sep).join('/'))
  .filter((file) => file.endsWith('.e2e-spec.ts') && !file.startsWith('static/') && alone(file))
  .sort();
/** A suite as testMatch takes it (a glob), and as testPathIgnorePatterns takes it (a regular expression). */
const glob = (/** @type {string} */ file) => `<rootDir>/test/${file}`;
const pattern = (/** @type {string} */ file) => `^${path.join(TEST, file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

// E2E_LANE, set by tools/test.js: `parallel` leaves the serial suites out of the e2e project, `serial` keeps only
// them; unset (a plain `npx jest`), every suite is in it.
const lane = process.env.E2E_LANE;
const e2eMatch = lane === 'serial' ? { testMatch: SERIAL.map(glob) } : { testMatch: ['**/*.e2e-spec.ts'] };
const e2eIgnore = [STATIC.pattern, ...(lane === 'parallel' ? SERIAL.map(pattern) : [])];

module.exports = {
  testTimeout: 60000,
  testSequencer: '<rootDir>/tools/harness/sequencer.js',
  projects: [
    { ...shared, displayName: 'unit', roots: ['<rootDir>/apps', '<rootDir>/libs'], testMatch: ['**/*.spec.ts'] },
    { ...shared, displayName: 'static', roots: ['<rootDir>/test'], testMatch: [STATIC.glob] },
    {
      ...shared,
      displayName: 'e2e',
      roots: ['<rootDir>/test'],
      ...e2eMatch,
      testPathIgnorePatterns: e2eIgnore,
      // Every suite past 5 s prints its time beside PASS: what a lane's length is made of, in any CI log.
      slowTestThreshold: 5,
    },
  ],
};
