// The stack the fuzzer hits: the built gateway and worker as processes of their own (so a crash is an exit we
// see, and the gateway's memory is its own), on Kafka and PostgreSQL from the environment (KAFKA_BROKERS,
// DATABASE_URL) or, when unset, the `fuzz` profile's own. On a shared PostgreSQL the run gets a database of its
// own: the fuzzer creates subscriptions and dead-letter actions no other suite should see.
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { PLANT_CREATED_DLQ_TOPIC, PLANT_CREATED_TOPIC } from '@app/contracts';
import { workerConsumerGroup } from '@app/kafka';
import { AppProcess, startAppStack } from '../harness/app-stack';
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
  let dlqStart = new Map<number, number>();
  const stack = await startAppStack({
    profile: 'fuzz',
    tokens: {
      webhook: TOKENS.webhook,
      admin: `fuzz-reader:read:${TOKENS.adminRead},fuzz-admin:write:${TOKENS.adminWrite}`,
    },
    // On a shared PostgreSQL the run's subscriptions and dead-letter actions stay in a database of its own.
    ownDatabase: true,
    ports,
    logDir: LOG_DIR,
    appEnv,
    // Generous: on a loaded machine a worker migrating a fresh database takes more than the launcher's 60 s.
    readyTimeoutMs: 180_000,
    // Before the worker joins: its groups start at the topics' ends (below).
    beforeApps: async (env) => void (dlqStart = await startAtTheEnd(env.KAFKA_BROKERS.split(','), env.WORKER_GROUP_ID)),
  });
  if (process.env.DATABASE_URL) log(`PostgreSQL: a database of the run's own on DATABASE_URL's server`);
  const [gateway, worker] = [stack.gateways[0], stack.workers[0]];
  const exited = (a: AppProcess) => () => !a.service.running;
  return {
    target: {
      gatewayUrl: gateway.url,
      databaseUrl: stack.databaseUrl,
      brokers: stack.brokers,
      dlqStart,
      tokens: TOKENS,
      processes: [
        { name: 'gateway', pid: gateway.service.pid, exited: exited(gateway), logFile: gateway.logFile! },
        { name: 'worker', pid: worker.service.pid, exited: exited(worker), logFile: worker.logFile! },
      ],
      gatewayPid: gateway.service.pid,
      limit: Number(stack.env.WEBHOOK_MAX_BYTES ?? 65536),
    },
    logTail: (name, lines = 20) => {
      try {
        return fs
          .readFileSync(path.join(LOG_DIR, `${name}.log`), 'utf8')
          .trimEnd()
          .split('\n')
          .slice(-lines)
          .join('\n');
      } catch {
        return '';
      }
    },
    stop: () => stack.stop(),
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
