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
      testMatch: ['**/*.e2e-spec.ts'],
      testPathIgnorePatterns: STATIC,
      slowTestThreshold: 20,
    },
  ],
};
