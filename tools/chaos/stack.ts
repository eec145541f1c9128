// The stack the fault suite breaks: its own Kafka broker and PostgreSQL (the `chaos` profile's ports and fresh
// data, never the ones `npm start` or `npm test` run), two workers and two gateways, each a supervised process
// that the scenarios kill, pause and restart themselves (no automatic restart: the suite decides when).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bringUp } from '../local-stack';
import { appService } from '../local-stack/apps';
import type { KafkaNode } from '../local-stack/kafka';
import { LOCAL } from '../local-stack/paths';
import { info, step } from '../local-stack/progress';
import { stopEverything, Supervised } from '../local-stack/supervisor';

export { info, step };
export type { KafkaNode };
/** A process of the stack the scenarios kill, pause and restart. */
type Service = Supervised;

export const WEBHOOK_TOKEN = 'chaos-webhook-token-0123456789';
export const ADMIN_TOKEN = 'chaos-admin-token-0123456789';
export const LOG_DIR = path.join(LOCAL, 'chaos');

export interface ChaosStack {
  /** The first Kafka node: the broker, with one node. */
  kafka: KafkaNode;
  /** Every Kafka node (one, or three with --brokers 3). */
  kafkaNodes: KafkaNode[];
  postgres: Service;
  gateways: Service[];
  workers: Service[];
  gatewayUrls: string[];
  /** Each worker's health and metrics port, in the order of `workers`. */
  workerPorts: number[];
  databaseUrl: string;
  brokers: string[];
  env: Record<string, string>;
  /** Starts a stopped service again, retrying a start that fails while the rest recovers. */
  restart(service: Service): Promise<void>;
  stop(): Promise<void>;
}

const GATEWAY_PORTS = [3401, 3402];
const WORKER_PORTS = [9471, 9472];

export interface StackOptions {
  /** Kafka nodes: 1, or a three-node KRaft quorum (KAFKA_NODES=3) with topics at 3 replicas, 2 in sync. */
  brokers?: number;
  /** The first node's client port (the next nodes take +2, +4; controllers +1): else the chaos profile's 31092. */
  kafkaPort?: number;
}

export async function startChaosStack(
  appEnv: Record<string, string>,
  { brokers = 1, kafkaPort }: StackOptions = {},
): Promise<ChaosStack> {
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  // Its own broker and database whatever the caller's environment says: this suite kills them.
  const callerEnv = { ...process.env };
  delete callerEnv.KAFKA_BROKERS;
  delete callerEnv.DATABASE_URL;
  callerEnv.KAFKA_NODES = String(brokers);
  const ports = kafkaPort ? { kafkaPort, controllerPort: kafkaPort + 1 } : {};
  const infra = await bringUp('chaos', callerEnv, { ports });
  const env = {
    ...infra.env,
    WEBHOOK_TOKENS: WEBHOOK_TOKEN,
    ADMIN_TOKENS: ADMIN_TOKEN,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_GROUP_ID: 'chaos',
    PLANT_CREATED_PARTITIONS: '6',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    ...appEnv,
  };
  const app = (kind: 'gateway' | 'worker', i: number) => {
    const port = String((kind === 'gateway' ? GATEWAY_PORTS : WORKER_PORTS)[i]);
    const ports: Record<string, string> =
      kind === 'gateway' ? { PORT: port, METRICS_PORT: String(9481 + i) } : { WORKER_METRICS_PORT: port };
    const label = `${kind}-${i + 1}`;
    return appService(
      kind,
      { ...env, ...ports },
      {
        label,
        readyUrl: `http://127.0.0.1:${port}/readyz`,
        logFile: path.join(LOG_DIR, `${label}.log`),
        // At the end the four stop at once: each waits out its own drain, and none needs another to stop.
        stopTogether: 'chaos-apps',
      },
    );
  };
  const workers = [app('worker', 0), app('worker', 1)];
  const gateways = [app('gateway', 0), app('gateway', 1)];
  const s = step('Starting two workers, then two gateways');
  try {
    await workers[0].start(); // the first one migrates and creates the topics
    await Promise.all([workers[1].start(), ...gateways.map((g) => g.start())]);
  } catch (err) {
    await stopEverything(); // else the broker and the database outlive the failed run
    throw err;
  }
  s.done();
  return {
    // bringUp started both: the caller's KAFKA_BROKERS and DATABASE_URL were dropped above
    kafka: infra.services.kafka!,
    kafkaNodes: infra.services.kafkaNodes!,
    postgres: infra.services.postgres!,
    gateways,
    workers,
    gatewayUrls: GATEWAY_PORTS.map((p) => `http://127.0.0.1:${p}`),
    workerPorts: WORKER_PORTS,
    databaseUrl: infra.env.DATABASE_URL,
    brokers: infra.env.KAFKA_BROKERS.split(','),
    env,
    async restart(service) {
      for (let attempt = 1; ; attempt++) {
        try {
          await service.start();
          return;
        } catch (err) {
          if (attempt >= 5) throw err;
          info(`${service.name} did not start (${(err as Error).message}); trying again`);
          await new Promise((r) => setTimeout(r, 2000));
        }
      }
    },
    stop: () => stopEverything(),
  };
}
