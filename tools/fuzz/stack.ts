// The stack the fuzzer hits: the built gateway and worker as processes of their own (so a crash is an exit we
// see, and the gateway's memory is its own), on Kafka and PostgreSQL from the environment (KAFKA_BROKERS,
// DATABASE_URL) or, when unset, the `fuzz` profile's own. On a shared PostgreSQL the run gets a database of its
// own: the fuzzer creates subscriptions and dead-letter actions no other suite should see.
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Pool } from 'pg';
import { PLANT_CREATED_DLQ_TOPIC, PLANT_CREATED_TOPIC } from '@app/contracts';
import { workerConsumerGroup } from '@app/kafka';
import { bringUp } from '../local-stack';
import { runApp, stopProcess, waitReady } from '../local-stack/apps';
import { LOCAL } from '../local-stack/paths';
import { FuzzTarget } from './fuzzer';

export const LOG_DIR = path.join(LOCAL, 'fuzz');
export const TOKENS = {
  webhook: 'fuzz-webhook-token-0123456789',
  adminRead: 'fuzz-reader-token-0123456789',
  adminWrite: 'fuzz-admin-token-0123456789',
};
/** The `fuzz` profile's app ports (its broker and database: tools/local-stack/index.ts). */
export const PORTS = { gateway: 45600, gatewayMetrics: 45601, worker: 45602 };

export interface FuzzStack {
  target: FuzzTarget;
  /** The gateway's and worker's last log lines, for a report that names a crash. */
  logTail(name: 'gateway' | 'worker', lines?: number): string;
  stop(): Promise<void>;
}

export async function startFuzzStack(
  ports = PORTS,
  appEnv: Record<string, string> = {},
  log: (line: string) => void = console.log,
): Promise<FuzzStack> {
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const infra = await bringUp('fuzz', process.env);
  const brokers = process.env.KAFKA_BROKERS ?? infra.env.KAFKA_BROKERS;
  const given = process.env.DATABASE_URL;
  let databaseUrl = infra.env.DATABASE_URL ?? given!;
  let dropDatabase = async () => undefined as void;
  if (given) {
    const name = `fuzz_${randomBytes(4).toString('hex')}`;
    const admin = new Pool({ connectionString: given, max: 1 });
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(given);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    log(`PostgreSQL: a database of the run's own, ${name}, on DATABASE_URL's server`);
    dropDatabase = async () => {
      const a = new Pool({ connectionString: given, max: 1 });
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await a.end();
    };
  }
  const env: Record<string, string> = {
    KAFKA_BROKERS: brokers,
    DATABASE_URL: databaseUrl,
    WEBHOOK_TOKENS: TOKENS.webhook,
    ADMIN_TOKENS: `fuzz-reader:read:${TOKENS.adminRead},fuzz-admin:write:${TOKENS.adminWrite}`,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_GROUP_ID: `fuzz-${randomBytes(3).toString('hex')}`,
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    PORT: String(ports.gateway),
    METRICS_PORT: String(ports.gatewayMetrics),
    METRICS_HOST: '127.0.0.1',
    WORKER_METRICS_PORT: String(ports.worker),
    ...appEnv,
  };
  const dlqStart = await startAtTheEnd(brokers.split(','), env.WORKER_GROUP_ID);
  const logFile = (name: string) => path.join(LOG_DIR, `${name}.log`);
  for (const name of ['gateway', 'worker']) fs.rmSync(logFile(name), { force: true });
  // The worker first: it migrates the database and creates the topics, which the gateway waits for.
  const worker = runApp('worker', env, { logFile: logFile('worker') });
  const gateway = runApp('gateway', env, { logFile: logFile('gateway') });
  const children = [worker, gateway];
  const stop = async () => {
    await Promise.all(children.map((c) => stopProcess(c, 20000)));
    await dropDatabase();
    await infra.stop();
  };
  try {
    // Generous: on a loaded machine a worker migrating a fresh database takes more than the launcher's 60 s.
    await waitReady(`http://127.0.0.1:${ports.worker}/readyz`, worker, 'worker', 180_000);
    await waitReady(`http://127.0.0.1:${ports.gateway}/readyz`, gateway, 'gateway', 180_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const exited = (c: ChildProcess) => () => c.exitCode !== null || c.signalCode !== null;
  return {
    target: {
      gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
      databaseUrl,
      brokers: brokers.split(','),
      dlqStart,
      tokens: TOKENS,
      processes: [
        { name: 'gateway', pid: gateway.pid, exited: exited(gateway), logFile: logFile('gateway') },
        { name: 'worker', pid: worker.pid, exited: exited(worker), logFile: logFile('worker') },
      ],
      gatewayPid: gateway.pid,
      limit: Number(env.WEBHOOK_MAX_BYTES ?? 65536),
    },
    logTail: (name, lines = 20) => {
      try {
        return fs.readFileSync(logFile(name), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    stop,
  };
}

/**
 * On a broker that already holds records (a shared one), the run's worker starts where the run does: its
 * consumer groups are committed at the topics' current ends before it joins, instead of reading every earlier
 * suite's records first (tens of thousands after a few runs) and keeping the run's own waiting behind them.
 * Returns where the dead-letter topic stood, per partition (empty on a fresh broker).
 */
async function startAtTheEnd(brokers: string[], groupId: string): Promise<Map<number, number>> {
  const admin = new Kafka({ brokers, clientId: 'fuzz-setup', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const dlqStart = new Map<number, number>();
  try {
    const topics = await admin.listTopics();
    for (const [topic, group] of [
      [PLANT_CREATED_TOPIC, workerConsumerGroup(groupId)],
      [PLANT_CREATED_DLQ_TOPIC, `${groupId}-dead-letters`],
    ]) {
      if (!topics.includes(topic)) continue;
      const offsets = await admin.fetchTopicOffsets(topic);
      await admin.setOffsets({
        groupId: group,
        topic,
        partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })),
      });
      if (topic === PLANT_CREATED_DLQ_TOPIC) for (const o of offsets) dlqStart.set(o.partition, Number(o.high));
    }
  } finally {
    await admin.disconnect();
  }
  return dlqStart;
}
