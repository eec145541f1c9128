// The stack the fault suite breaks: its own Kafka broker and PostgreSQL (the `chaos` profile's ports and fresh
// data, never the ones `npm start` or `npm test` run), two workers and two gateways, each a supervised process
// that the scenarios kill, pause and restart themselves (no automatic restart: the suite decides when).
// Started by the harness's one starter (tools/harness/app-stack.ts).
import fs from 'node:fs';
import path from 'node:path';
import { AppStack, startAppStack } from '../harness/app-stack';
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
  // Its own broker and database whatever the caller's environment says: this suite kills them.
  const callerEnv = { ...process.env };
  delete callerEnv.KAFKA_BROKERS;
  delete callerEnv.DATABASE_URL;
  callerEnv.KAFKA_NODES = String(brokers);
  const s = step('Starting the broker and database, two workers, then two gateways');
  let stack: AppStack;
  try {
    stack = await startAppStack({
      profile: 'chaos',
      callerEnv,
      bringUp: { ports: kafkaPort ? { kafkaPort, controllerPort: kafkaPort + 1 } : {} },
      tokens: { webhook: WEBHOOK_TOKEN, admin: ADMIN_TOKEN },
      appEnv: { WORKER_GROUP_ID: 'chaos', PLANT_CREATED_PARTITIONS: '6', ...appEnv },
      workers: 2,
      gateways: 2,
      ports: { gateway: 3401, gatewayMetrics: 9481, worker: 9471 },
      logDir: LOG_DIR,
    });
  } catch (err) {
    await stopEverything(); // also what was still starting
    throw err;
  }
  s.done();
  return {
    // bringUp started both: the caller's KAFKA_BROKERS and DATABASE_URL were dropped above
    kafka: stack.infra.services.kafka!,
    kafkaNodes: stack.infra.services.kafkaNodes!,
    postgres: stack.infra.services.postgres!,
    gateways: stack.gateways.map((g) => g.service),
    workers: stack.workers.map((w) => w.service),
    gatewayUrls: stack.gateways.map((g) => g.url),
    workerPorts: stack.workers.map((w) => Number(new URL(w.url).port)),
    databaseUrl: stack.databaseUrl,
    brokers: stack.brokers,
    env: stack.env,
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
