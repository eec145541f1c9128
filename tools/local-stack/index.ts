// Brings up what the environment does not already provide: Kafka unless KAFKA_BROKERS is set, PostgreSQL
// unless DATABASE_URL is set. Nothing found on their ports is reused: what an earlier, killed run of the same
// profile left behind is stopped first; anything else stops the launcher with the port and who holds it.
// Everything is checked before anything starts, and a start that fails stops what it had started.
import { KafkaNode, prepareKafka, startKafka } from './kafka';
import { reclaimOrphans } from './orphans';
import { ensurePortFree } from './ports';
import { preparePostgres, startPostgres } from './postgres';
import { info } from './progress';
import { stopEverything, Supervised } from './supervisor';

export type { KafkaNode } from './kafka';
export type { Supervised } from './supervisor';

export interface Ports {
  kafkaPort: number;
  controllerPort: number;
  pgPort: number;
}

export type Profile = Ports & { fresh: boolean };

export const PROFILES: Record<string, Profile> = {
  // npm start: the usual ports, data kept between runs
  dev: { kafkaPort: 9092, controllerPort: 9093, pgPort: 55432, fresh: false },
  // npm test: its own ports and fresh data, so it never collides with a running `npm start`
  test: { kafkaPort: 19092, controllerPort: 19093, pgPort: 55433, fresh: true },
  // npm run bench:*: its own ports and fresh data again, so figures do not depend on earlier runs
  bench: { kafkaPort: 29092, controllerPort: 29093, pgPort: 55434, fresh: true },
  // npm run chaos: its own again, because it kills and restarts them
  // Below Linux's ephemeral range (32768-60999), PostgreSQL too: a broker or database restarted mid-run must find
  // its port free, and an outgoing connection (of the suites running beside it) may hold any port in that range.
  chaos: { kafkaPort: 31092, controllerPort: 31093, pgPort: 31098, fresh: true },
  // npm run fuzz: its own again, so a run's hostile data lands nowhere else
  fuzz: { kafkaPort: 45692, controllerPort: 45693, pgPort: 45694, fresh: true },
};

/**
 * `restart`: a broker or database that exits on its own is restarted with back-off (npm start). `ports`
 * overrides the profile's ports (the launcher's own tests). `appPorts`: the ports the caller's apps will
 * listen on, checked with the rest before anything starts ({ port, what, remedy }).
 */
export interface BringUpOptions {
  restart?: boolean;
  ports?: Partial<Ports>;
  appPorts?: { port: number; what: string; remedy: string }[];
}

/** What bringUp started: the variables that point the apps at it, its processes, and how to stop them. */
export interface LocalStack {
  env: Record<string, string>;
  services: { kafka?: KafkaNode; kafkaNodes?: KafkaNode[]; postgres?: Supervised };
  stop(): Promise<void>;
}

export async function bringUp(
  profileName: string,
  env: NodeJS.ProcessEnv = process.env,
  { restart = false, ports = {}, appPorts = [] }: BringUpOptions = {},
): Promise<LocalStack> {
  // A name of no profile (the launcher's tests): fresh data, on the ports given.
  const known: Profile | undefined = PROFILES[profileName];
  const p = { ...known, ...ports, fresh: known?.fresh ?? true } as Profile;
  const nodes = kafkaNodes(env);
  const wantKafka = !env.KAFKA_BROKERS;
  const wantPostgres = !env.DATABASE_URL;
  await reclaimOrphans(profileName);
  for (const a of appPorts) await ensurePortFree(a.port, a.what, a.remedy);
  if (wantKafka) await prepareKafka({ port: p.kafkaPort, controllerPort: p.controllerPort, nodes });
  if (wantPostgres) await preparePostgres({ name: profileName, port: p.pgPort });

  const out: Record<string, string> = {};
  const stops: (() => Promise<void>)[] = [];
  const services: LocalStack['services'] = {};
  try {
    if (!wantKafka) info(`Kafka: using KAFKA_BROKERS=${env.KAFKA_BROKERS}`);
    else {
      const k = await startKafka({
        name: profileName,
        port: p.kafkaPort,
        controllerPort: p.controllerPort,
        fresh: p.fresh,
        restart,
        nodes,
      });
      out.KAFKA_BROKERS = k.brokers.join(',');
      if (nodes > 1) {
        // The apps create the topics: as the production overlay asks, unless the caller chose otherwise.
        out.KAFKA_REPLICATION_FACTOR = env.KAFKA_REPLICATION_FACTOR || '3';
        out.KAFKA_MIN_INSYNC_REPLICAS = env.KAFKA_MIN_INSYNC_REPLICAS || '2';
      }
      services.kafka = k.service;
      services.kafkaNodes = k.services;
      stops.push(k.stop);
    }
    if (!wantPostgres) info('PostgreSQL: using DATABASE_URL');
    else {
      const pg = await startPostgres({ name: profileName, port: p.pgPort, fresh: p.fresh, restart });
      out.DATABASE_URL = pg.url;
      services.postgres = pg.service;
      stops.push(pg.stop);
    }
  } catch (err) {
    await stopEverything(); // also a broker still starting when PostgreSQL failed
    throw err;
  }
  return { env: out, services, stop: () => stopAll(stops) };
}

/** KAFKA_NODES: 1 (the default) or 3, the local broker's size; anything else stops the launcher at once. */
function kafkaNodes(env: NodeJS.ProcessEnv): number {
  const raw = env.KAFKA_NODES ?? '1';
  if (raw !== '1' && raw !== '3')
    throw new Error(`KAFKA_NODES must be 1 or 3 (a KRaft quorum needs an odd number of voters), not "${raw}"`);
  return Number(raw);
}

async function stopAll(stops: (() => Promise<void>)[]) {
  for (const stop of stops.reverse()) await stop().catch((err) => console.error(err));
}
