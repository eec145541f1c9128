// ElasticMQ, an SQS-compatible server, for the end-to-end tests of SQS destinations: its jars fetched once from
// Maven Central into .local/elasticmq/lib (git-ignored; the pom beside this file), started with plain `java` on a
// free port in a temporary folder, stopped by stop(). What a run started is recorded (.local/run/test-elasticmq/),
// so that the next run stops it when this one was killed, as brokers.ts does for the other brokers.
// ElasticMQ speaks SQS's JSON and query protocols but checks no signature: any access key and secret are taken.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alive, forgetOwner, reclaimOrphans, recordOwner } from '../local-stack/orphans';
import { LOCAL } from '../local-stack/paths';
import { portOpen, sleep } from '../local-stack/processes';
import { step } from '../local-stack/progress';
import { freePort } from './processes';

const VERSION = '1.6.11';
const LIB = path.join(LOCAL, 'elasticmq/lib');
const POM = path.join(__dirname, 'elasticmq/pom.xml');
/** .local/run/test-elasticmq/: what a test run started, so that the next one stops it if this one was killed. */
const PROFILE = 'test-elasticmq';
/** ElasticMQ's account and region as configured here: its queue URLs are http://127.0.0.1:<port>/<account>/<name>. */
export const ELASTICMQ_ACCOUNT = '000000000000';
export const ELASTICMQ_REGION = 'elasticmq';
const READY_MS = 60_000;

export interface LocalElasticMq {
  /** http://127.0.0.1:<port>: what an SQS client is given as its endpoint. */
  endpoint: string;
  port: number;
  /** The sqs+http:// URL of a subscription to `queue` here, with a (never checked) key and secret. */
  url(queue: string, via?: string): string;
  /** The queue's own URL (QueueUrl in SQS calls). */
  queueUrl(queue: string): string;
  stop(): Promise<void>;
}

function jarsPresent(): boolean {
  return fs.existsSync(LIB) && fs.readdirSync(LIB).some((f) => f.startsWith('elasticmq-server_2.13-'));
}

/**
 * Fetches the jars with Maven once. Into a folder of this process first, renamed into place when complete: two
 * suites starting at once do not write the same jars, and a fetch cut short leaves nothing that looks complete.
 */
export function fetchElasticMq(): void {
  if (jarsPresent()) return;
  const s = step(`Fetching ElasticMQ ${VERSION} from Maven Central (first run only, ~40 MB)`);
  const tmp = `${LIB}.fetch-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const mvn = spawnSync('mvn', ['-B', '-f', POM, `-Delasticmq.lib.dir=${tmp}`, 'dependency:copy-dependencies'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const fetched = fs.existsSync(tmp) && fs.readdirSync(tmp).some((f) => f.startsWith('elasticmq-server_2.13-'));
  if (mvn.status !== 0 || !fetched) {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.stderr.write((mvn.stdout ?? '') + (mvn.stderr ?? ''));
    throw new Error('mvn could not fetch ElasticMQ (is Maven installed and Maven Central reachable?)');
  }
  if (jarsPresent())
    fs.rmSync(tmp, { recursive: true, force: true }); // another run was first
  else fs.renameSync(tmp, LIB);
  s.done(`${fs.readdirSync(LIB).length} jars in .local/elasticmq/lib`);
}

/** One started server: its process group (the JVM, started with setsid) and folder. */
interface Started {
  dir: string;
  group: number;
  name: string;
}
const live = new Set<Started>();
// An exit without stop() (an uncaught error, a forgotten afterAll) still takes the server along: synchronously.
function killLive() {
  for (const s of live) {
    signalGroup(s.group, 'SIGKILL');
    forgetOwner(PROFILE, s.name);
    fs.rmSync(s.dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
let reclaimed: Promise<void> | undefined;

/** An ElasticMQ of this process on 127.0.0.1, on a free port, ready for SQS calls. */
export async function startElasticMq(): Promise<LocalElasticMq> {
  fetchElasticMq();
  await (reclaimed ??= reclaimOrphans(PROFILE).then(removeStaleFolders));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `plantstore-elasticmq-${process.pid}-`));
  const port = await freePort();
  // node-address: the queue URLs it answers with name this port (its default says localhost:9324).
  const conf = [
    `node-address { protocol = http, host = "127.0.0.1", port = ${port}, context-path = "" }`,
    `rest-sqs { enabled = true, bind-port = ${port}, bind-hostname = "127.0.0.1", sqs-limits = strict }`,
    'rest-stats { enabled = false }',
    'generate-node-address = false',
    `aws { region = "${ELASTICMQ_REGION}", accountId = "${ELASTICMQ_ACCOUNT}" }`,
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'elasticmq.conf'), conf);
  const args = [
    '-Xmx256m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1', // starts faster; a test queue needs no peak speed
    `-Dconfig.file=${path.join(dir, 'elasticmq.conf')}`,
    '-cp',
    `${LIB}/*`,
    'org.elasticmq.server.Main',
  ];
  const out = fs.openSync(path.join(dir, 'server.log'), 'a');
  const child = spawn('java', args, { cwd: dir, detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  child.unref(); // a forgotten stop() must not keep the test process alive: its exit hook kills it
  child.on('error', () => undefined); // reported below, with the log
  if (!child.pid) throw new Error('could not run java for ElasticMQ (Java 17 is needed)');
  const s: Started = { dir, group: child.pid, name: `elasticmq-${port}` };
  if (live.size === 0) process.on('exit', killLive);
  live.add(s);
  recordOwner(PROFILE, s.name, s.group);
  try {
    await waitReady(s, port);
  } catch (err) {
    await stopStarted(s);
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    queueUrl: (queue) => `${endpoint}/${ELASTICMQ_ACCOUNT}/${queue}`,
    url: (queue, via = `127.0.0.1:${port}`) =>
      `sqs+http://test-key:test-secret@${via}/${ELASTICMQ_ACCOUNT}/${queue}?region=${ELASTICMQ_REGION}`,
    stop: () => stopStarted(s),
  };
}

async function waitReady(s: Started, port: number): Promise<void> {
  const deadline = Date.now() + READY_MS;
  while (Date.now() < deadline && groupAlive(s.group)) {
    if (await portOpen(port, '127.0.0.1', 1000)) return;
    await sleep(100);
  }
  const why = groupAlive(s.group) ? `did not accept connections within ${READY_MS / 1000} s` : 'exited';
  const tail = fs.readFileSync(path.join(s.dir, 'server.log'), 'utf8').trimEnd().split('\n').slice(-20).join('\n');
  throw new Error(`ElasticMQ on 127.0.0.1:${port} ${why}; its log ended with:\n${tail}`);
}

/** SIGTERM to its group, SIGKILL after 5 s; then its record and folder go. */
async function stopStarted(s: Started): Promise<void> {
  if (!live.has(s)) return;
  signalGroup(s.group, 'SIGTERM');
  for (let t = Date.now(); groupAlive(s.group) && Date.now() - t < 5000;) await sleep(100);
  signalGroup(s.group, 'SIGKILL');
  for (let t = Date.now(); groupAlive(s.group) && Date.now() - t < 5000;) await sleep(50);
  forgetOwner(PROFILE, s.name);
  live.delete(s);
  if (live.size === 0) process.removeListener('exit', killLive);
  fs.rmSync(s.dir, { recursive: true, force: true });
}

/** The folders of runs killed before stop() (reclaimOrphans stopped their servers): named after their process. */
function removeStaleFolders() {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const pid = Number(/^plantstore-elasticmq-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !alive(pid))
      fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // there, but not ours to signal
  }
}
const groupAlive = (group: number) => signalGroup(group, 0);
