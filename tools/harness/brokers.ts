// The brokers the end-to-end tests of broker destinations talk to. Our machines and CI run them on 127.0.0.1 at
// their standard ports; a user's machine may not, so what is missing is started here from its Debian package, on
// a free port in a temporary folder, and stopped by stop(). PLANT_STORE_TEST_OWN_BROKERS=1 (or
// { standardPorts: false }) always starts own ones: for a machine whose brokers are busy or configured otherwise.
// Own brokers keep their data in their folder (Redis's append-only file, JetStream's file store, Mosquitto's
// persistence file, RabbitMQ's durable queues), so that stopped() can stop one and start it again with its data.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alive, forgetOwner, reclaimOrphans, recordOwner } from '../local-stack/orphans';
import { portOpen, sleep } from '../local-stack/processes';
import { step } from '../local-stack/progress';
import { freePort } from './processes';

export type BrokerKind = 'amqp' | 'nats' | 'mqtt' | 'redis';
export interface LocalBrokers extends Record<BrokerKind, string> {
  stop(): Promise<void>;
  /**
   * Stops the broker of `kind` started here with `signal` (SIGTERM: a clean shutdown, SIGKILL: a crash), runs
   * `during` while it is down, then starts it again on the same port with the same data and resolves (with what
   * `during` resolved) once it accepts connections; it is started again when `during` throws too. Only for a
   * broker started here: the machine's own ones (on the standard ports) are never stopped.
   */
  stopped<T>(kind: BrokerKind, during: () => Promise<T>, signal?: NodeJS.Signals): Promise<T>;
}
/** standardPorts: false starts own brokers even where the standard ports answer (as PLANT_STORE_TEST_OWN_BROKERS=1). */
export interface LocalBrokersOptions {
  standardPorts?: boolean;
}

/** Each broker's Debian package (also its program's name), standard port, URL up to the port, start bound. */
const SPECS: Record<BrokerKind, { pkg: string; port: number; url: string; readyMs: number }> = {
  amqp: { pkg: 'rabbitmq-server', port: 5672, url: 'amqp://guest:guest@127.0.0.1:', readyMs: 90000 },
  nats: { pkg: 'nats-server', port: 4222, url: 'nats://127.0.0.1:', readyMs: 30000 },
  mqtt: { pkg: 'mosquitto', port: 1883, url: 'mqtt://127.0.0.1:', readyMs: 30000 },
  redis: { pkg: 'redis-server', port: 6379, url: 'redis://127.0.0.1:', readyMs: 30000 },
};

/** .local/run/test-brokers/: what a test run started, so that the next one stops it if this one was killed. */
const PROFILE = 'test-brokers';

/** One started broker: its process groups (RabbitMQ has two: the VM and its own epmd) and folder. */
interface Started {
  kind: BrokerKind;
  dir: string;
  groups: number[];
  names: string[];
  /** How its broker (the last group) was launched, to launch it again after stopped(). */
  broker?: { name: string; bin: string; args: string[]; env: NodeJS.ProcessEnv; port: number };
}
const live = new Set<Started>();
// An exit without stop() (an uncaught error, a forgotten afterAll) still takes the brokers along: synchronously.
function killLive() {
  for (const s of live) {
    s.groups.forEach((g) => signalGroup(g, 'SIGKILL'));
    s.names.forEach((name) => forgetOwner(PROFILE, name));
    fs.rmSync(s.dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
let reclaimed: Promise<void> | undefined;

/** For each kind: the running one on its standard port, or one started here on a free port (stopped by stop()). */
export async function localBrokers(
  kinds: BrokerKind[] = ['amqp', 'nats', 'mqtt', 'redis'],
  options: LocalBrokersOptions = {},
): Promise<LocalBrokers> {
  const own = options.standardPorts === false || process.env.PLANT_STORE_TEST_OWN_BROKERS === '1';
  const urls: Record<BrokerKind, string> = { amqp: '', nats: '', mqtt: '', redis: '' }; // '' if not asked for
  const open = await Promise.all(kinds.map((k) => !own && portOpen(SPECS[k].port, '127.0.0.1', 1000)));
  for (const [i, k] of kinds.entries()) if (open[i]) urls[k] = SPECS[k].url + SPECS[k].port;
  const missing = kinds.filter((_, i) => !open[i]);
  const started: Started[] = [];
  const stop = async () => {
    await Promise.all(started.splice(0).map(stopStarted));
  };
  if (missing.length) {
    const bins = missing.map((k) => ensureBinary(SPECS[k])); // apt-get first: it is synchronous
    await (reclaimed ??= reclaimOrphans(PROFILE).then(removeStaleFolders));
    const results = await Promise.allSettled(
      missing.map(async (k, i) => {
        urls[k] = SPECS[k].url + (await start(k, bins[i], started));
      }),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      await stop();
      throw failed.reason;
    }
  }
  const stopped = async <T>(kind: BrokerKind, during: () => Promise<T>, signal: NodeJS.Signals = 'SIGTERM') => {
    const s = started.find((x) => x.kind === kind);
    if (!s?.broker) throw new Error(`the ${kind} broker was not started here (it is the machine's): not stopping it`);
    await stopBroker(s, signal);
    try {
      return await during();
    } finally {
      await startBroker(s);
    }
  };
  return { ...urls, stop, stopped };
}

/** The folders of runs killed before stop() (reclaimOrphans stopped their brokers): named after their process. */
function removeStaleFolders() {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const pid = Number(/^plantstore-(?:amqp|nats|mqtt|redis)-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !alive(pid))
      fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

/** First the real rabbitmq-server: Debian's /usr/sbin one su's to `rabbitmq`, who cannot read our folder. */
function findBinary(bin: string): string | undefined {
  const all = ['/usr/lib/rabbitmq/bin', ...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/lib/erlang/bin'];
  return all
    .filter(Boolean)
    .map((d) => path.join(d, bin))
    .find(executable);
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The broker's program; as root its Debian package is installed when missing (as ensureChromium does). */
function ensureBinary({ pkg, port }: { pkg: string; port: number }): string {
  const found = findBinary(pkg);
  if (found) return found;
  const how = `apt-get install -y --no-install-recommends ${pkg}`;
  if (process.getuid?.() !== 0)
    throw new Error(`the broker tests need ${pkg} (or one running on 127.0.0.1:${port}): run \`sudo ${how}\``);
  const s = step(`Installing ${pkg} for the broker tests (apt-get, first run only)`);
  // Two test workers may install at once: wait for dpkg's lock rather than fail on it.
  const apt = (...args: string[]) =>
    spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  const install = () => apt('install', '-y', '--no-install-recommends', pkg);
  let r = install();
  if (r.status !== 0) {
    apt('update');
    r = install();
  }
  if (r.status !== 0) throw new Error(`apt-get could not install ${pkg}: try \`${how}\` yourself`);
  const bin = findBinary(pkg);
  if (!bin) throw new Error(`the package ${pkg} is installed but its program is not on PATH nor in /usr/sbin`);
  s.done();
  return bin;
}

/** Starts `kind` in a folder of its own and resolves with its port once that accepts connections. */
async function start(kind: BrokerKind, bin: string, started: Started[]): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `plantstore-${kind}-${process.pid}-`));
  const s: Started = { kind, dir, groups: [], names: [] };
  started.push(s);
  if (live.size === 0) process.on('exit', killLive);
  live.add(s);
  const [port, dist, epmd] = await freePorts(3);
  const file = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  let args: string[] = [];
  let env: NodeJS.ProcessEnv = process.env;
  // Redis writes each command to its append-only file before it answers (fsync'd each second): a SIGKILL loses
  // nothing it acknowledged. JetStream's file store writes each message before its ack. Mosquitto saves its
  // sessions and their queued messages when it stops (SIGTERM).
  if (kind === 'redis')
    args = ['--port', `${port}`, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir];
  if (kind === 'nats') args = ['-a', '127.0.0.1', '-p', `${port}`, '-js', '-sd', path.join(dir, 'js')];
  if (kind === 'mqtt') {
    const conf = `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location ${dir}/\n`;
    args = ['-c', file('mosquitto.conf', conf)];
  }
  if (kind === 'amqp') {
    // An epmd of its own (Erlang would otherwise start a daemon that outlives stop()), in its own group.
    const epmdBin = findBinary('epmd') ?? 'epmd';
    launch(s, `amqp-epmd-${port}`, epmdBin, ['-port', `${epmd}`, '-address', '127.0.0.1'], env, 'epmd.log');
    await waitReady(s, 'its epmd', epmd, 10000, 'epmd.log');
    env = {
      ...process.env,
      HOME: dir, // its Erlang cookie
      ERL_EPMD_PORT: `${epmd}`,
      // Not /etc/rabbitmq's files: they name the system node, its 5672 listener and its plugins (15672).
      RABBITMQ_CONF_ENV_FILE: file('rabbitmq-env.conf', ''),
      RABBITMQ_CONFIG_FILE: file('rabbitmq.conf', ''),
      RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'advanced.config'),
      RABBITMQ_ENABLED_PLUGINS_FILE: file('enabled_plugins', '[].\n'),
      RABBITMQ_NODENAME: `plantstore-test-${port}@localhost`,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: `${port}`,
      RABBITMQ_DIST_PORT: `${dist}`,
      RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
      RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(dir, 'log'),
      RABBITMQ_LOGS: '-', // into broker.log with the script's own output
      RUNNING_UNDER_SYSTEMD: 'true', // the script then execs the VM: one process to record and signal
      NOTIFY_SOCKET: undefined,
    };
  }
  s.broker = { name: `${kind}-${port}`, bin, args, env, port };
  await startBroker(s);
  return port;
}

/** Launches the broker of `s` (again: on its port, with its folder) and waits until it accepts connections. */
async function startBroker(s: Started): Promise<void> {
  const { name, bin, args, env, port } = s.broker!;
  launch(s, name, bin, args, env, 'broker.log');
  await waitReady(s, SPECS[s.kind].pkg, port, SPECS[s.kind].readyMs, 'broker.log');
  s.names.forEach((n, i) => recordOwner(PROFILE, n, s.groups[i])); // again: redis retitles itself
}

/** Stops the broker of `s` (its last group; RabbitMQ's epmd stays) with `signal`, SIGKILL after 30 s. */
async function stopBroker(s: Started, signal: NodeJS.Signals): Promise<void> {
  const group = s.groups.pop()!;
  const name = s.names.pop()!;
  signalGroup(group, signal);
  for (let t = Date.now(); groupAlive(group) && Date.now() - t < 30000;) await sleep(50);
  signalGroup(group, 'SIGKILL');
  for (let t = Date.now(); groupAlive(group) && Date.now() - t < 5000;) await sleep(50);
  forgetOwner(PROFILE, name);
}

/** Runs `bin` as its own process group (setsid), its output into `log`, and records it at once. */
function launch(s: Started, name: string, bin: string, args: string[], env: NodeJS.ProcessEnv, log: string) {
  const out = fs.openSync(path.join(s.dir, log), 'a');
  const child = spawn(bin, args, { cwd: s.dir, env, detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  child.unref(); // a forgotten stop() must not keep the test process alive: its exit hook kills them
  child.on('error', () => undefined); // reported by waitReady, as the log
  if (!child.pid) throw new Error(`could not run ${bin}`);
  s.groups.push(child.pid);
  s.names.push(name);
  recordOwner(PROFILE, name, child.pid);
}

async function waitReady(s: Started, what: string, port: number, timeoutMs: number, log: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const group = s.groups[s.groups.length - 1];
  while (Date.now() < deadline && groupAlive(group)) {
    if (await portOpen(port, '127.0.0.1', 1000)) return;
    await sleep(100);
  }
  const why = groupAlive(group) ? `did not accept connections within ${timeoutMs / 1000} s` : 'exited';
  const tail = fs.readFileSync(path.join(s.dir, log), 'utf8').trimEnd().split('\n').slice(-20).join('\n');
  throw new Error(`${what} on 127.0.0.1:${port} ${why}; its log (${log}) ended with:\n${tail}`);
}

/** SIGTERM to each group, SIGKILL after 5 s; then its records and folder go. */
async function stopStarted(s: Started): Promise<void> {
  for (const group of [...s.groups].reverse()) {
    signalGroup(group, 'SIGTERM');
    for (let t = Date.now(); groupAlive(group) && Date.now() - t < 5000;) await sleep(100);
    signalGroup(group, 'SIGKILL');
    for (let t = Date.now(); groupAlive(group) && Date.now() - t < 5000;) await sleep(50);
  }
  s.names.forEach((name) => forgetOwner(PROFILE, name));
  live.delete(s);
  if (live.size === 0) process.removeListener('exit', killLive);
  fs.rmSync(s.dir, { recursive: true, force: true });
}

function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch (err) {
    return err.code === 'EPERM'; // there, but not ours to signal
  }
}
const groupAlive = (group: number) => signalGroup(group, 0);

/** `n` distinct free ports (one free port asked for n times may come back twice). */
async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
