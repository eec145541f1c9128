import { ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import net from 'node:net';
// The launcher knows where the build puts each app: asked, not repeated.
import { appNodeFlags, builtAppEntry } from '../local-stack/apps';
import { waitFor } from './wait';

/** The built app (tools/test.js builds before jest), run as its own process so a test can signal it. */
export function spawnBuiltApp(
  app: 'gateway' | 'worker',
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: string[] } {
  const child = spawn(process.execPath, [...appNodeFlags(app), builtAppEntry(app)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (d) => output.push(String(d)));
  child.stderr!.on('data', (d) => output.push(String(d)));
  child.once('exit', (code, signal) => output.push(`[${app} exited: code ${code}, signal ${signal}]`));
  return { child, output };
}

/** The built gateway in a process of its own, resolved once /readyz answers 200 (its output in the error if not). */
export async function spawnReadyGateway(
  env: NodeJS.ProcessEnv,
  url: string,
): Promise<{ child: ChildProcess; output: string[] }> {
  const started = spawnBuiltApp('gateway', env);
  await waitFor(
    'the gateway to be ready',
    async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok,
    30000,
    200,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${started.output.join('')}`);
  });
  return started;
}

export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/**
 * Where freePort() draws from: below Linux's ephemeral range (32768-60999), where the kernel picks outgoing
 * sockets' ports, and holding no port a profile fixes (the fault suite's three brokers at 31092-31097, the bench's
 * 29092) nor the secure brokers' 26000-26899 (test/static/ports.e2e-spec.ts checks both). Seen when it reached
 * 31999: a suite's Redis took 31094 before the fault suite, running beside it, started its second broker there.
 */
export const FREE_PORTS = { from: 20_000, count: 6_000 };

/**
 * A port nothing listens on now, for a server a test starts a moment later. Not one the kernel chose (port 0):
 * that is an ephemeral port, and an outgoing connection of any suite (a Kafka or PostgreSQL client) could take it
 * as its local port before the server binds (seen: a fuzz gateway's EADDRINUSE, a broker restarted on its port).
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = FREE_PORTS.from + randomInt(FREE_PORTS.count);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${FREE_PORTS.from} and ${FREE_PORTS.from + FREE_PORTS.count}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}
