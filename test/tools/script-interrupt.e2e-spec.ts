import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// `npm run chaos`, `npm run bench:*` and `npm run fuzz` bring up brokers and databases of their own, in process
// groups of their own, so a terminal's Ctrl-C does not reach them: the script has to stop them. A script that
// just died left them running (a three-broker fault run interrupted once left three JVMs and a PostgreSQL).
// Here a script supervises a process as the launcher does and is interrupted: nothing it started may survive.

const ROOT = path.resolve(__dirname, '../..');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a script that brings up services, interrupted', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('stops what it started on %s, then exits', async (signal) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'interrupt-'));
    const script = path.join(dir, 'script.ts');
    writeFileSync(
      script,
      `import { spawn } from 'node:child_process';
import { stopEverythingOnInterrupt, Supervised } from ${JSON.stringify(path.join(ROOT, 'tools/local-stack/supervisor'))};
stopEverythingOnInterrupt('the test script');
const sleeper = new Supervised('sleeper', {
  spawn: () => spawn('sleep', ['600'], { detached: true, stdio: 'ignore' }),
  ready: async () => true,
  group: true,
  stopGraceMs: 2000,
});
void sleeper.start().then(() => console.log('ready ' + sleeper.pid));
setInterval(() => undefined, 1000);
`,
    );
    const child = spawn(
      process.execPath,
      ['-r', require.resolve('ts-node/register/transpile-only', { paths: [ROOT] }), script],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, TS_NODE_COMPILER_OPTIONS: '{"module":"commonjs"}' },
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const pid = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "ready" from the script: ${out}`)), 30_000);
      child.stdout.on('data', () => {
        const m = /ready (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    expect(alive(pid)).toBe(true);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    expect(await exited).toBe(signal === 'SIGINT' ? 130 : 143);
    expect(alive(pid)).toBe(false);
    expect(out).toContain(`${signal}: stopping what the test script started`);
  });
});
