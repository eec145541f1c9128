import { ChildProcess, spawn } from 'node:child_process';
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

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}
