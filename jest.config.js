// Two projects: unit specs live beside the code (apps/, libs/), end-to-end specs in test/ and need the
// real Kafka and PostgreSQL that tools/test.js starts (it passes their addresses through the environment).
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

const shared = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  transform: {
    '^.+\\.ts$': 'ts-jest',
    // The OTLP exporter loads node:http with a dynamic import(), which jest's vm refuses without
    // --experimental-vm-modules; transpiled to CommonJS it becomes a require.
    'node_modules/@opentelemetry/otlp-exporter-base/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@opentelemetry/otlp-exporter-base/)'],
};

// Suites that read files and schemas only (docs, manifests, the OpenAPI document): no broker, no database.
// `npm run test:static` runs them in seconds; `npm test` runs them with the rest.
const STATIC = [
  'readme',
  'monitoring',
  'openapi-lint',
  'compose',
  'k8s',
  'env-example',
  'api-schema',
  'shipped-examples',
  'sql-files',
].map((name) => `<rootDir>/test/${name}.e2e-spec.ts`);

// End-to-end suites that must have the test stack to themselves; `npm test` runs them one at a time after the
// others, which run two at a time (tools/test.js). Every other suite keeps to its own plant ids, consumer groups,
// databases and ports, so two of them at once do not see each other.
const SERIAL = [
  // They pause the shared broker (SIGSTOP): every other suite's publishes would stall with it.
  'gateway',
  'publish-outcome',
  // A worker on the shared database: it claims and sends every suite's deliveries there, with its own settings
  // (timeouts, retry schedule, SSRF rules, tracing), so two such suites at once would send each other's.
  'api-conformance',
  'cli',
  'delivery',
  'delivery-crash',
  'logs',
  'pipeline',
  'ssrf-send',
  'subscription-cache',
  'subscription-filters',
  'subscription-loop',
  'tracing',
  'walkthrough',
  'worker-listen',
  // An unfiltered subscription and the newest plants' page: it counts every plant posted while it runs.
  'console-browser',
  // Their own servers on fixed ports.
  'chaos',
  'database-freeze',
  'database-tls',
  // Load that needs the machine to itself: the fuzzer's bounds (no 5xx, the gateway's memory) and the burst of
  // 20,000 poison records that every later worker would re-read (tools/support/sequencer.js runs it last).
  'fuzz',
  'dead-letter-burst',
  // 3,500 connections holding 64 KiB bodies against a gateway whose resident set is measured.
  'body-budget',
  // A retry's time checked to the second beside 40,000 held rows: another suite's load would be in the figure.
  'subscriber-isolation',
].map((name) => `<rootDir>/test/${name}.e2e-spec.ts`);

// E2E_LANE, set by tools/test.js: `parallel` leaves the serial suites out of the e2e project, `serial` keeps only
// them; unset (a plain `npx jest`), every suite is in it.
const lane = process.env.E2E_LANE;
const e2eMatch = lane === 'serial' ? { testMatch: SERIAL } : { testMatch: ['**/*.e2e-spec.ts'] };
const e2eIgnore = lane === 'parallel' ? [...STATIC, ...SERIAL] : STATIC;

module.exports = {
  testTimeout: 60000,
  testSequencer: '<rootDir>/tools/support/sequencer.js',
  projects: [
    { ...shared, displayName: 'unit', roots: ['<rootDir>/apps', '<rootDir>/libs'], testMatch: ['**/*.spec.ts'] },
    { ...shared, displayName: 'static', roots: ['<rootDir>/test'], testMatch: STATIC },
    {
      ...shared,
      displayName: 'e2e',
      roots: ['<rootDir>/test'],
      ...e2eMatch,
      testPathIgnorePatterns: e2eIgnore,
      slowTestThreshold: 20,
    },
  ],
};
