// The one way a script starts the service as processes of their own: the benchmarks, the fault suite and the
// fuzzer. A broker and a database from bringUp (the profile's own ports and fresh data, unless the caller's
// environment names KAFKA_BROKERS or DATABASE_URL), then the built workers and gateways as supervised processes
// (tools/local-stack/supervisor.ts) that a scenario may kill, pause and restart. The end-to-end suites start the
// same apps in their own process (stack.ts), or one built app beside them (processes.ts).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bringUp, BringUpOptions, LocalStack } from '../local-stack';
import { appService, runApp } from '../local-stack/apps';
import type { Supervised } from '../local-stack/supervisor';
import { databaseOfItsOwn } from './scratch-database';

export interface AppStackOptions {
  /** bringUp's profile (tools/local-stack/index.ts): the ports of its broker and database. */
  profile: string;
  /** What bringUp reads: a KAFKA_BROKERS or DATABASE_URL there is used instead of starting one. */
  callerEnv?: NodeJS.ProcessEnv;
  bringUp?: BringUpOptions;
  /** WEBHOOK_TOKENS and ADMIN_TOKENS as the apps read them. */
  tokens: { webhook: string; admin: string };
  /** Added to every app's environment (over the defaults below). */
  appEnv?: Record<string, string>;
  /** Added to the workers' alone. */
  workerEnv?: Record<string, string>;
  /** Workers in one consumer group; with 0, the worker's set-up job runs once instead (a gateway-only run). */
  workers?: number;
  gateways?: number;
  /** The first gateway's port and metrics port, the first worker's health port; each next one takes +1, +2, +2. */
  ports: { gateway: number; gatewayMetrics: number; worker: number };
  /** Each app's lines go to `<logDir>/<label>.log` (emptied first); else to the terminal unless `quiet`. */
  logDir?: string;
  quiet?: boolean;
  /** On a DATABASE_URL the caller gave: a database of the run's own there, dropped at the end. */
  ownDatabase?: boolean;
  /** How long each app may take to be ready (the supervisor's default otherwise). */
  readyTimeoutMs?: number;
  /** Runs once the broker and the database are up, before any app starts, with the apps' environment. */
  beforeApps?: (env: Record<string, string>) => Promise<void>;
}

export interface AppProcess {
  service: Supervised;
  /** gateway-1, worker-2; gateway and worker when there is one of its kind. */
  label: string;
  url: string;
  /** The gateway's metrics port (the worker serves its metrics on `url`). */
  metricsUrl: string;
  logFile?: string;
}

export interface AppStack {
  /** What every app runs with, ports aside. */
  env: Record<string, string>;
  infra: LocalStack;
  databaseUrl: string;
  brokers: string[];
  gateways: AppProcess[];
  workers: AppProcess[];
  /** One more worker in the group, on the next port. */
  addWorker(extra?: Record<string, string>): Promise<AppProcess>;
  /** Stops one worker for good (its port is the next addWorker's). */
  removeWorker(worker: AppProcess): Promise<void>;
  /** Stops the apps (at once), drops a database of the run's own, then stops what bringUp started. */
  stop(): Promise<void>;
}

export async function startAppStack(o: AppStackOptions): Promise<AppStack> {
  const callerEnv = o.callerEnv ?? process.env;
  const infra = await bringUp(o.profile, callerEnv, o.bringUp);
  const given = callerEnv.DATABASE_URL;
  const brokers = infra.env.KAFKA_BROKERS ?? callerEnv.KAFKA_BROKERS!;
  const own = o.ownDatabase && given ? await databaseOfItsOwn(given, o.profile) : null;
  const env: Record<string, string> = {
    ...infra.env,
    KAFKA_BROKERS: brokers,
    DATABASE_URL: own?.url ?? infra.env.DATABASE_URL ?? given!,
    WEBHOOK_TOKENS: o.tokens.webhook,
    ADMIN_TOKENS: o.tokens.admin,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_GROUP_ID: `${o.profile}-${randomBytes(3).toString('hex')}`,
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    ...o.appEnv,
  };
  if (o.logDir) fs.mkdirSync(o.logDir, { recursive: true });
  const workerCount = o.workers ?? 1;
  const gatewayCount = o.gateways ?? 1;
  const gateways: AppProcess[] = [];
  const workers: AppProcess[] = [];

  const app = (kind: 'gateway' | 'worker', i: number, count: number, extra: Record<string, string>): AppProcess => {
    const port = kind === 'gateway' ? o.ports.gateway + i : o.ports.worker + 2 * i;
    const metricsPort = o.ports.gatewayMetrics + 2 * i;
    const ports: Record<string, string> =
      kind === 'gateway'
        ? { PORT: String(port), METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' }
        : { WORKER_METRICS_PORT: String(port) };
    const label = count > 1 ? `${kind}-${i + 1}` : kind;
    const logFile = o.logDir && path.join(o.logDir, `${label}.log`);
    if (logFile) fs.rmSync(logFile, { force: true });
    const url = `http://127.0.0.1:${port}`;
    const service = appService(
      kind,
      { ...env, ...(kind === 'worker' ? o.workerEnv : {}), ...extra, ...ports },
      // The apps stop at once at the end: each waits out its own drain, and none needs another to stop.
      {
        label,
        readyUrl: `${url}/readyz`,
        logFile,
        quiet: o.quiet,
        stopTogether: `${o.profile}-apps`,
        readyTimeoutMs: o.readyTimeoutMs,
      },
    );
    return { service, label, url, metricsUrl: kind === 'gateway' ? `http://127.0.0.1:${metricsPort}` : url, logFile };
  };

  const stop = async () => {
    await Promise.all([...gateways, ...workers].map((a) => a.service.stop()));
    await own?.drop().catch(() => undefined);
    await infra.stop();
  };
  try {
    await o.beforeApps?.(env);
    for (let i = 0; i < workerCount; i++) workers.push(app('worker', i, workerCount, {}));
    for (let i = 0; i < gatewayCount; i++) gateways.push(app('gateway', i, gatewayCount, {}));
    // The first worker migrates the database and creates the topics, which the gateway waits for; with no worker,
    // its set-up job does the same.
    if (workers.length > 0) await workers[0].service.start();
    else await setUp({ ...env, ...o.workerEnv });
    await Promise.all([...workers.slice(1), ...gateways].map((a) => a.service.start()));
  } catch (err) {
    await stop().catch(() => undefined); // else the broker and the database outlive the failed run
    throw err;
  }
  return {
    env,
    infra,
    databaseUrl: env.DATABASE_URL,
    brokers: brokers.split(','),
    gateways,
    workers,
    async addWorker(extra = {}) {
      const worker = app('worker', workers.length, workers.length + 1, extra);
      workers.push(worker);
      await worker.service.start();
      return worker;
    },
    async removeWorker(worker) {
      await worker.service.stop();
      workers.splice(workers.indexOf(worker), 1);
    },
    stop,
  };
}

/** The worker's set-up job (migrations and topics), run once to its end. */
async function setUp(env: Record<string, string>): Promise<void> {
  const setup = runApp('worker', env, { quiet: true, entry: 'setup/main' });
  const code = await new Promise<number | null>((resolve) => setup.once('exit', resolve));
  if (code !== 0) throw new Error(`the worker's set-up job exited with ${code}`);
}
