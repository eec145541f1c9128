import { randomBytes, randomInt } from 'node:crypto';
import { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { kafkaClientConfigFromEnv } from '@app/kafka';
import { Pool } from 'pg';
import { loadConfig, workerEnvSchema } from '@app/config';
import { createLogger } from '@app/observability';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createGatewayApp } from '../../apps/gateway/src/gateway.app';
import { MetricsServer } from '../../apps/gateway/src/metrics/metrics-server';
import { prepareInfrastructure } from '../../apps/worker/src/setup/prepare';
import { createWorkerApp } from '../../apps/worker/src/worker.app';

// The end-to-end suites run against the real Kafka and PostgreSQL that tools/test.js started and
// announced through the environment. Each suite uses its own consumer group and its own plant ids.
const required = (name: string) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the end-to-end tests with \`npm test\``);
  return v;
};

import { databaseOfItsOwn, ScratchDatabase } from './scratch-database';
import { ADMIN_TOKEN, TEST_SECRETS_KEY, WEBHOOK_TOKEN } from './tokens';

export { ADMIN_TOKEN, TEST_SECRETS_KEY, WEBHOOK_TOKEN };
export type { ScratchDatabase };

export function baseEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    KAFKA_BROKERS: required('KAFKA_BROKERS'),
    DATABASE_URL: required('DATABASE_URL'),
    WEBHOOK_TOKENS: WEBHOOK_TOKEN,
    ADMIN_TOKENS: ADMIN_TOKEN,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
    PLANT_CREATED_PARTITIONS: '6',
    PORT: '0',
    METRICS_PORT: '0',
    METRICS_HOST: '127.0.0.1',
    WORKER_METRICS_PORT: '0',
    WORKER_GROUP_ID: `e2e-${randomBytes(4).toString('hex')}`,
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    PATH: process.env.PATH ?? '',
    ...overrides,
  };
}

/** Plant ids no other suite or run will use. */
export function plantIds(): () => number {
  let next = randomInt(1, 2 ** 40) * 1000;
  return () => next++;
}

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  /** The metrics port (METRICS_PORT), apart from the public one. */
  metricsUrl: string;
  close(): Promise<void>;
}

export async function startGateway(env: NodeJS.ProcessEnv): Promise<RunningGateway> {
  // A gateway checks, it does not create: as the setup job would. A suite with a database of its own starts its
  // worker first (its setup migrates that database); the shared one's set-up is not its business.
  if (env.DATABASE_URL === process.env.DATABASE_URL) await prepareTestInfrastructure();
  const { app } = await createGatewayApp(env);
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  const metricsUrl = `http://127.0.0.1:${app.get(MetricsServer).port}`;
  return { app, url: url.replace('[::1]', '127.0.0.1'), metricsUrl, close: () => app.close() };
}

export interface RunningWorker {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

export async function startWorker(env: NodeJS.ProcessEnv): Promise<RunningWorker> {
  const { app } = await createWorkerApp(env);
  await app.init();
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl(), close: () => app.close() };
}

export function postPlant(gatewayUrl: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gatewayUrl}/plant/webhook`, {
    method: 'POST',
    headers: { authorization: `Bearer ${WEBHOOK_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function testPool(): Pool {
  return new Pool({ connectionString: required('DATABASE_URL'), max: 3 });
}

let prepared: Promise<void> | null = null;

/**
 * What the worker's setup job does before any app starts (migrations and topics, with the worker's own code),
 * for a suite that starts a gateway or reads the topics before a worker has run. Once per suite.
 */
export function prepareTestInfrastructure(): Promise<void> {
  prepared ??= prepareInfrastructure(loadConfig(workerEnvSchema, baseEnv()), createLogger('e2e-setup', 'warn'));
  return prepared;
}

/**
 * The same for a suite's own environment, e.g. with a KAFKA_TOPIC_PREFIX of its own: a suite that floods its topic
 * (big or many records) keeps the shared plant.created to the suites that read it from its start.
 */
export function prepareInfrastructureFor(env: NodeJS.ProcessEnv): Promise<void> {
  return prepareInfrastructure(loadConfig(workerEnvSchema, env), createLogger('e2e-setup', 'warn'));
}

/**
 * A consumer of `topic` from the beginning, in a group of its own, resolved only once it has joined the group
 * (on a fresh broker the first join waits for the offsets topic to be created).
 */
export async function startReader(topic: string, onMessage: (m: KafkaMessage) => void): Promise<Consumer> {
  const consumer = testKafka().consumer({ groupId: `e2e-reader-${randomBytes(4).toString('hex')}` });
  const joined = new Promise<void>((resolve, reject) => {
    consumer.on(consumer.events.GROUP_JOIN, () => resolve());
    consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => onMessage(message) });
  await joined;
  return consumer;
}

export function testKafka(): Kafka {
  return new Kafka(kafkaClientConfigFromEnv({ ...process.env, KAFKA_BROKERS: required('KAFKA_BROKERS') }, 'e2e'));
}

/**
 * An empty database of a suite's own on the test server (databaseOfItsOwn on DATABASE_URL's server). `drop()` ends
 * it.
 */
export function scratchDatabase(prefix: string, poolSize = 4): Promise<ScratchDatabase> {
  return databaseOfItsOwn(required('DATABASE_URL'), prefix, poolSize);
}
