import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { alive } from '../../tools/local-stack/orphans';
import { checkReachable, serverUser } from '../../tools/local-stack/postgres';
// The launcher's own probes, asked rather than written again.
import { portOpen } from '../../tools/local-stack/processes';
import * as e2e from '../../tools/harness/stack';
import { exitOf, freePort } from '../../tools/harness/processes';
import { waitFor } from '../../tools/harness/wait';

// The local launcher as a newcomer meets it: what it does when a port is taken, when a start fails halfway,
// when an earlier run was killed and left its broker behind, when an app crashes under `npm start`, and on
// Ctrl-C. Each case runs the real launcher code in a process of its own, on ports of its own, so the test
// stack that `npm test` brought up is never touched (and is checked to survive).

const ROOT = path.resolve(__dirname, '../..');

interface Launched {
  child: ChildProcess;
  out: () => string;
}

/**
 * Runs bringUp(profile, env, { ports }) in a process of its own, its TypeScript loaded as `npm start` loads it;
 * it prints READY and waits for SIGTERM.
 */
function bringUp(profile: string, ports: Record<string, number>, env: Record<string, string> = {}): Launched {
  const script = `
    require('./tools/local-stack/typescript').registerTypeScript();
    const { bringUp } = require('./tools/local-stack');
    const { stopEverything } = require('./tools/local-stack/supervisor');
    process.on('SIGTERM', () => stopEverything().then(() => process.exit(0)));
    bringUp(${JSON.stringify(profile)}, process.env, { ports: ${JSON.stringify(ports)} })
      .then(() => console.log('READY'), (err) => { console.error('FAILED: ' + err.message); process.exit(3); });
    setInterval(() => {}, 1e9);`;
  return launch(['-e', script], env);
}

function launch(args: string[], env: Record<string, string>): Launched {
  const base = { ...process.env };
  delete base.KAFKA_BROKERS; // the launcher starts its own unless told otherwise
  delete base.DATABASE_URL;
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += String(d)));
  child.stderr!.on('data', (d) => (text += String(d)));
  return { child, out: () => text };
}

async function ports() {
  return { kafkaPort: await freePort(), controllerPort: await freePort(), pgPort: await freePort() };
}

const profile = () => `launcher-${randomBytes(3).toString('hex')}`;
const runRecord = (p: string, name: string) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, '.local/run', p, `${name}.json`), 'utf8')) as { pid: number };

afterAll(() => {
  for (const dir of ['kafka', 'postgres', 'run'])
    for (const f of fs.readdirSync(path.join(ROOT, '.local', dir)).filter((n) => n.startsWith('launcher-')))
      fs.rmSync(path.join(ROOT, '.local', dir, f), { recursive: true, force: true });
});

describe('local launcher', () => {
  it('names a port that is taken and who holds it, before it starts anything', async () => {
    const p = await ports();
    const squatter = net.createServer().listen(p.pgPort, '127.0.0.1');
    try {
      const run = bringUp(profile(), p);
      expect((await exitOf(run.child)).code).toBe(3);
      expect(run.out()).toContain(`PostgreSQL: port ${p.pgPort} is already in use by pid ${process.pid}`);
      expect(run.out()).toContain('set DATABASE_URL');
      expect(run.out()).not.toContain('Starting Kafka');
      expect(run.out()).not.toContain('TypeError');
      expect(await portOpen(p.kafkaPort)).toBe(false);
    } finally {
      squatter.close();
    }
  });

  it('stops the broker it had started when PostgreSQL then fails to start', async () => {
    const p = await ports();
    const run = bringUp(profile(), p);
    // Taken after the up-front checks passed, while the broker starts: PostgreSQL's own start then fails.
    await waitFor('the broker to be starting', () => run.out().includes('Starting Kafka broker'), 60000);
    const squatter = net.createServer().listen(p.pgPort, '127.0.0.1');
    try {
      expect((await exitOf(run.child)).code).toBe(3);
      expect(run.out()).toContain(`port ${p.pgPort} is already in use`);
      expect(run.out()).toContain('Stopping kafka');
      expect(await portOpen(p.kafkaPort)).toBe(false);
    } finally {
      squatter.close();
    }
  }, 200_000); // a broker start (up to 90 s to be ready) and its stop, on a loaded 2-core machine

  it('stops what a killed earlier run left behind, then starts its own; never reuses it silently', async () => {
    const name = profile();
    const p = await ports();
    const first = bringUp(name, p, { DATABASE_URL: 'postgresql://unused' });
    await waitFor('the first broker', () => first.out().includes('READY'), 90000);
    const orphan = runRecord(name, 'kafka').pid;
    first.child.kill('SIGKILL'); // a launcher that cannot clean up: its broker is orphaned
    await exitOf(first.child);
    expect(alive(orphan)).toBe(true);

    const second = bringUp(name, p, { DATABASE_URL: 'postgresql://unused' });
    await waitFor('the second broker', () => second.out().includes('READY'), 90000);
    expect(second.out()).toContain(`kafka: stopping the one an earlier run left behind (pid ${orphan}`);
    expect(alive(orphan)).toBe(false);
    const own = runRecord(name, 'kafka').pid;
    expect(own).not.toBe(orphan);
    second.child.kill('SIGTERM');
    expect((await exitOf(second.child)).code).toBe(0);
    expect(alive(own)).toBe(false);
  }, 200_000); // two broker starts, each waited for up to 90 s

  it('under npm start, restarts a crashed app while the rest keeps running; Ctrl-C stops what it started, only that', async () => {
    const env = {
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!, // the test stack's: the launcher must not stop it
      DATABASE_URL: process.env.DATABASE_URL!,
      SECRETS_KEY: e2e.TEST_SECRETS_KEY, // the key the shared test database's credentials are sealed with
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      WORKER_METRICS_PORT: String(await freePort()),
      WORKER_GROUP_ID: `e2e-launcher-${randomBytes(3).toString('hex')}`,
      LOG_LEVEL: 'warn',
    };
    await e2e.prepareTestInfrastructure();
    const run = launch(['tools/start.js', '--no-build'], env);
    try {
      await waitFor(
        'Plant Store to be up',
        () => {
          if (run.child.exitCode !== null) throw new Error(`the launcher exited (${run.child.exitCode})`);
          return run.out().includes('Plant Store is up');
        },
        120000,
      );
      const gateway = runRecord('dev', 'gateway').pid;
      const worker = runRecord('dev', 'worker').pid;
      process.kill(gateway, 'SIGKILL');
      await waitFor('the restart line', () => /gateway exited \(signal SIGKILL\).*restarting in 1s/.test(run.out()));
      await waitFor('the gateway to be back', () => run.out().includes('gateway is back'), 120000);
      const res = await fetch(`http://127.0.0.1:${env.PORT}/readyz`);
      expect(res.status).toBe(200);
      expect(runRecord('dev', 'gateway').pid).not.toBe(gateway);
      expect(alive(worker)).toBe(true); // the rest kept running

      const restarted = runRecord('dev', 'gateway').pid;
      run.child.kill('SIGINT');
      expect((await exitOf(run.child)).code).toBe(0);
      expect(alive(restarted)).toBe(false);
      expect(alive(worker)).toBe(false);
      expect(run.out()).not.toMatch(/exited.*restarting in 2s/); // stopping is not a crash
      // What it did not start is still there.
      expect(await portOpen(Number(env.KAFKA_BROKERS.split(':')[1]))).toBe(true);
      const pool = e2e.testPool();
      await expect(pool.query('SELECT 1')).resolves.toBeTruthy();
      await pool.end();
    } catch (err) {
      // What the launcher printed is what a person would look at: keep it with the failure.
      throw new Error(
        `${(err as Error).message}\n--- launcher output (last 4000 characters) ---\n${run.out().slice(-4000)}`,
        { cause: err },
      );
    } finally {
      run.child.kill('SIGKILL');
    }
  }, 240_000); // two app starts, a crash and a restart, on a loaded 2-core machine

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  asRoot('as root, stops at once with what to do when the postgres user cannot reach the data folder', () => {
    const locked = fs.mkdtempSync(path.join(os.tmpdir(), 'locked-'));
    fs.chmodSync(locked, 0o700); // like /root
    const data = path.join(locked, 'plant-store/.local/postgres');
    fs.mkdirSync(data, { recursive: true });
    try {
      expect(() => checkReachable(data, serverUser())).toThrow(
        new RegExp(
          `cannot reach its data folder .*may not enter ${locked} \\(mode 700\\).*chmod o\\+x ${locked}.*DATABASE_URL`,
        ),
      );
      fs.chmodSync(locked, 0o711);
      expect(() => checkReachable(data, serverUser())).not.toThrow();
    } finally {
      fs.rmSync(locked, { recursive: true, force: true });
    }
  });
});
