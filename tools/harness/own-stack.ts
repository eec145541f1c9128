import { randomBytes } from 'node:crypto';
import {
  baseEnv,
  RunningGateway,
  RunningWorker,
  ScratchDatabase,
  scratchDatabase,
  startGateway,
  startWorker,
} from './stack';
import { startAtTopicEnd } from './topic-end';

// A worker on the shared database claims and sends every suite's deliveries there, with its own settings (retry
// schedule, SSRF rules, tracing…); one on the shared topic stores every plant the other suites post, fans it out to
// this suite's subscriptions, and what a subscriber posts back (a store subscribed to itself) lands in theirs. A
// suite that runs a worker keeps to a database and topics of its own, and can then run beside the others (three at
// a time, tools/test.js). Apart from stack.ts, which topic-end.ts imports.

export interface OwnDatabase {
  /** baseEnv() with the database's DATABASE_URL, the suite's KAFKA_TOPIC_PREFIX and the overrides. */
  env: NodeJS.ProcessEnv;
  db: ScratchDatabase;
}

/**
 * An empty database of the suite's own, and the environment to run its apps on, with topics of its own
 * (`<prefix>-<random>.plant.created`, created by the worker's set-up). With `KAFKA_TOPIC_PREFIX: ''` in the
 * overrides its apps use the shared plant.created instead, and its worker group is set to start at the topic's end
 * (startAtTopicEnd): its worker then also stores the plants the other suites post meanwhile, in this database, and
 * sends them to this suite's subscriptions.
 * Nothing is migrated or created yet: start the worker first (its set-up does both), or call
 * prepareInfrastructureFor(env) before a gateway or an app in a process of its own.
 */
export async function ownDatabase(prefix: string, overrides: Record<string, string> = {}): Promise<OwnDatabase> {
  const db = await scratchDatabase(prefix);
  try {
    const topics = `${prefix}-${randomBytes(4).toString('hex')}.`;
    const env = baseEnv({ DATABASE_URL: db.url, KAFKA_TOPIC_PREFIX: topics, ...overrides });
    if (!env.KAFKA_TOPIC_PREFIX) await startAtTopicEnd(env.WORKER_GROUP_ID!);
    return { env, db };
  } catch (err) {
    await db.drop();
    throw err;
  }
}

export interface OwnStack extends OwnDatabase {
  gateway: RunningGateway;
  worker: RunningWorker;
  /** Closes the gateway and the worker, then drops the database. */
  close(): Promise<void>;
}

/**
 * ownDatabase(), then a worker (which migrates it) and a gateway on it. `worker` changes the worker's environment
 * alone (e.g. a proxied DATABASE_URL, or SSRF rules stricter than the gateway's).
 */
export async function startOwnStack(
  prefix: string,
  overrides: Record<string, string> = {},
  { worker: workerEnv = (env) => env }: { worker?: (env: NodeJS.ProcessEnv) => NodeJS.ProcessEnv } = {},
): Promise<OwnStack> {
  const { env, db } = await ownDatabase(prefix, overrides);
  const running: { close(): Promise<void> }[] = [];
  const close = async () => {
    try {
      for (const app of running.splice(0).reverse()) await app.close();
    } finally {
      await db.drop();
    }
  };
  try {
    const worker = await startWorker(workerEnv(env));
    running.push(worker);
    const gateway = await startGateway(env);
    running.push(gateway);
    return { env, db, gateway, worker, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
