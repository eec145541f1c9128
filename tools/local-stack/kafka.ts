// A real Apache Kafka 3.9.2 broker (KRaft, one node as broker and controller) from Maven Central jars,
// started with plain `java`. The jars live in .local/kafka/lib (git-ignored) and are fetched once.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { LOCAL, ROOT } from './paths';
import { ensurePortFree } from './ports';
import { portOpen } from './processes';
import { info, step } from './progress';
import { Supervised } from './supervisor';

const LIB = path.join(LOCAL, 'kafka/lib');
/** The broker's Maven pom, config template and logging, beside this launcher. */
const CONFIG = path.join(__dirname, 'kafka');
const CLUSTER_ID = '4L6g3nShT-eMCtK--X86sw';
const LOG4J = `-Dlog4j.configuration=file:${path.join(CONFIG, 'log4j.properties')}`;
const CLASS_PATH = ['-cp', `${LIB}/*`];

function jarsPresent() {
  return fs.existsSync(LIB) && fs.readdirSync(LIB).some((f) => /^kafka_2\.13-.*\.jar$/.test(f));
}

/** Fetches the broker jars with Maven, printing each artifact as it arrives. */
export function fetchJars(): void {
  if (jarsPresent()) return;
  const s = step('Fetching Apache Kafka 3.9.2 from Maven Central (first run only, ~50 MB)');
  const mvn = spawnSync(
    'mvn',
    ['-B', '-f', path.join(CONFIG, 'pom.xml'), `-Dkafka.lib.dir=${LIB}`, 'dependency:copy-dependencies'],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const downloads = (mvn.stdout || '').split('\n').filter((l) => l.includes('Downloaded from'));
  if (mvn.status !== 0 || !jarsPresent()) {
    process.stderr.write(mvn.stdout + mvn.stderr);
    throw new Error('mvn could not fetch the Kafka broker jars (is Maven installed and Maven Central reachable?)');
  }
  s.done(`${downloads.length} artifacts downloaded, ${fs.readdirSync(LIB).length} jars in .local/kafka/lib`);
}

async function answersMetadata(brokers: string[]): Promise<boolean> {
  const admin = new Kafka({
    brokers,
    clientId: 'plant-store-probe',
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return true;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** The ports a local cluster starts from, and its size (1 or 3). */
export interface ClusterPorts {
  port: number;
  controllerPort: number;
  nodes?: number;
}

export interface ClusterNode {
  id: number;
  port: number;
  controllerPort: number;
}

/** A supervised Kafka node, with its node.id, client port and own broker log (which says when it became controller). */
export type KafkaNode = Supervised & { nodeId: number; port: number; logFile: string };

export interface LocalKafka {
  brokers: string[];
  /** The first node: the broker, with one node. */
  service: KafkaNode;
  services: KafkaNode[];
  stop(): Promise<void>;
}

/**
 * The nodes of a local cluster of `nodes` (1 or 3): node i (from 1) listens on port + 2(i-1) for clients and
 * controllerPort + 2(i-1) for the quorum, so one node keeps the profile's two ports and three take 9092..9097.
 */
export function clusterNodes({ port, controllerPort, nodes = 1 }: ClusterPorts): ClusterNode[] {
  return Array.from({ length: nodes }, (_, i) => ({
    id: i + 1,
    port: port + 2 * i,
    controllerPort: controllerPort + 2 * i,
  }));
}

/** Checks what can be checked before anything starts (the ports), and fetches the jars once. */
export async function prepareKafka({ port, controllerPort, nodes = 1 }: ClusterPorts): Promise<void> {
  const remedy = 'Stop it, or set KAFKA_BROKERS=host:port to use that broker on purpose.';
  for (const n of clusterNodes({ port, controllerPort, nodes })) {
    await ensurePortFree(n.port, 'Kafka', remedy);
    await ensurePortFree(n.controllerPort, 'Kafka (controller listener)', remedy);
  }
  fetchJars();
}

/**
 * A broker on 127.0.0.1:port, supervised (see supervisor.js), in its own process group so that a terminal's
 * Ctrl-C reaches the launcher, which stops the apps before the broker. Nothing already on the port is reused:
 * the launcher says who holds it (set KAFKA_BROKERS to use a broker of your own on purpose). `fresh` wipes the
 * data folder first (tests, benchmarks); otherwise data persists between runs.
 *
 * `nodes: 3`: a three-node KRaft quorum on loopback, each node broker and controller with its own ports, data
 * folder and log (.local/kafka/<name>/node-<i>), each supervised on its own, so that the fault suite can kill,
 * pause and restart one node while the others serve. Topics then get 3 replicas and 2 in sync, as in production.
 */
export async function startKafka({
  name,
  port,
  controllerPort,
  fresh = false,
  heapMb = 512,
  restart = false,
  nodes = 1,
}: ClusterPorts & { name: string; fresh?: boolean; heapMb?: number; restart?: boolean }): Promise<LocalKafka> {
  const members = clusterNodes({ port, controllerPort, nodes });
  const brokers = members.map((n) => `127.0.0.1:${n.port}`);
  await prepareKafka({ port, controllerPort, nodes });
  const base = path.join(LOCAL, 'kafka', name);
  if (fresh) fs.rmSync(base, { recursive: true, force: true });
  const voters = members.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
  const replicas = nodes >= 3 ? 3 : 1;
  const clustered = nodes > 1;
  const s = step(
    clustered
      ? `Starting a ${nodes}-node Kafka cluster on 127.0.0.1:${brokers.map((b) => b.split(':')[1]).join(',')} (logs: ${path.relative(ROOT, base)}/node-*/broker.log)`
      : `Starting Kafka broker on 127.0.0.1:${port} (log: ${path.relative(ROOT, path.join(base, 'broker.log'))})`,
  );
  const services = members.map((node) =>
    nodeService({
      name,
      node,
      dir: clustered ? path.join(base, `node-${node.id}`) : base,
      voters,
      replicas,
      // three JVMs on two cores: small heaps
      heapMb: clustered ? Math.min(heapMb, 384) : heapMb,
      restart,
      service: clustered ? `kafka-${node.id}` : 'kafka',
    }),
  );
  // All at once: a node of a quorum is ready only once a majority of the voters has elected a leader.
  const results = await Promise.allSettled(services.map((svc) => (clustered ? startAgain(svc) : svc.start())));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(services.map((svc) => svc.stop().catch(() => undefined)));
    throw (failed as PromiseRejectedResult).reason;
  }
  s.done();
  return {
    brokers,
    service: services[0],
    services,
    // together: stopped one by one, the last node would wait out its grace period for a quorum that is gone
    stop: async () => {
      await Promise.all(services.map((svc) => svc.stop()));
    },
  };
}

/**
 * A node that exits while starting is started again, twice at most. Seen here: a node could not bind its port
 * because an outgoing connection had just been given it as its local port (our ports lie in Linux's ephemeral
 * range), which lasts only as long as that connection. With three nodes, six ports make that likelier.
 */
async function startAgain(svc: Supervised, attempts = 3): Promise<Supervised> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await svc.start();
    } catch (err) {
      if (attempt >= attempts) throw err;
      info(`${svc.name} did not start (${err.message}); trying again`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

/** One node: its server.properties, its storage formatted once, and the supervised `java` process. */
function nodeService({
  name,
  node,
  dir,
  voters,
  replicas,
  heapMb,
  restart,
  service,
}: {
  name: string;
  node: ClusterNode;
  dir: string;
  voters: string;
  replicas: number;
  heapMb: number;
  restart: boolean;
  service: string;
}): KafkaNode {
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const props = fs
    .readFileSync(path.join(CONFIG, 'server.properties.in'), 'utf8')
    .replaceAll('__NODE_ID__', String(node.id))
    .replaceAll('__VOTERS__', voters)
    .replaceAll('__REPLICAS__', String(replicas))
    .replaceAll('__MIN_ISR__', String(replicas >= 3 ? 2 : 1))
    .replaceAll('__DATA_DIR__', path.join(dir, 'data'))
    .replaceAll('__PORT__', String(node.port))
    .replaceAll('__CONTROLLER_PORT__', String(node.controllerPort));
  const propsFile = path.join(dir, 'server.properties');
  fs.writeFileSync(propsFile, props);
  const logFile = path.join(dir, 'broker.log');
  formatStorage(propsFile, ['--ignore-formatted']);
  const svc = new Supervised(service, {
    owner: name,
    restart,
    group: true,
    stopTogether: `kafka-${name}`,
    logHint: path.relative(ROOT, logFile),
    stopGraceMs: 20000,
    spawn: () => spawnBroker(propsFile, { heapMb, logFile, detached: true }),
    ready: async () => (await portOpen(node.port)) && (await answersMetadata([`127.0.0.1:${node.port}`])),
  });
  return Object.assign(svc, { nodeId: node.id, port: node.port, logFile });
}

/**
 * Formats a node's storage for the local cluster id (KRaft), as server.properties says where it is. `extra`:
 * more options of the storage tool (`--ignore-formatted` to keep what is there, `--add-scram` users).
 */
export function formatStorage(propsFile: string, extra: string[] = []): void {
  const format = spawnSync(
    'java',
    [
      '-Xmx256m',
      '-XX:TieredStopAtLevel=1',
      LOG4J,
      ...CLASS_PATH,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      CLUSTER_ID,
      '-c',
      propsFile,
      ...extra,
    ],
    { encoding: 'utf8' },
  );
  if (format.status !== 0) throw new Error(`kafka storage format failed:\n${format.stdout}${format.stderr}`);
}

/**
 * A broker (`java kafka.Kafka` on its server.properties) from the jars in .local/kafka/lib, its output appended
 * to `logFile`. `jvmFlags`: system properties it needs besides (-D…). `detached`: a process group of its own.
 */
export function spawnBroker(
  propsFile: string,
  {
    heapMb,
    logFile,
    jvmFlags = [],
    detached = false,
  }: { heapMb: number; logFile: string; jvmFlags?: string[]; detached?: boolean },
): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(
    'java',
    // C1 only: measured on 2 cores, C2 kept compiling broker code for minutes and took more CPU than the
    // broker's own request handling; a local broker at a few thousand records/s does not need C2's code.
    [
      `-Xms128m`,
      `-Xmx${heapMb}m`,
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      '-XX:TieredStopAtLevel=1',
      '-Djava.awt.headless=true',
      ...jvmFlags,
      LOG4J,
      ...CLASS_PATH,
      'kafka.Kafka',
      propsFile,
    ],
    { stdio: ['ignore', log, log], detached },
  );
  fs.closeSync(log);
  return child;
}
