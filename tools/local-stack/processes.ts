import { ChildProcess } from 'node:child_process';
import net from 'node:net';

/** True when something accepts TCP connections on host:port. */
export function portOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  { timeoutMs = 60000, intervalMs = 250 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: Error | undefined;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(
    `timed out after ${timeoutMs / 1000}s waiting for ${what}${lastError ? `: ${lastError.message}` : ''}`,
  );
}

/** SIGTERM, then SIGKILL if the process has not exited within graceMs. */
export function stopProcess(child: ChildProcess | null, graceMs = 15000): Promise<void> {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Apps a script spawned itself (runApp: the fuzzer's, a benchmark's), until each exits. */
const spawned = new Set<ChildProcess>();

/** Remembers `child` until it exits, so that an interrupted script stops it (stopSpawned). */
export function trackSpawned(child: ChildProcess): ChildProcess {
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  return child;
}

/**
 * Stops every tracked child still running (SIGTERM, SIGKILL after `graceMs`). An interrupted `npm run fuzz`
 * stopped its broker and database and left its gateway and worker running (issue #34): they were spawned with
 * runApp, outside the supervisor's list.
 */
export async function stopSpawned(graceMs = 20000): Promise<void> {
  await Promise.all([...spawned].map((child) => stopProcess(child, graceMs)));
}
