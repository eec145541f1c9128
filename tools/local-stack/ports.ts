// "Port 55432 is in use" is only useful with who holds it. On Linux the listening socket's inode is in
// /proc/net/tcp{,6} and the process that holds it has that inode among its /proc/<pid>/fd links.
import fs from 'node:fs';
import { commandLine } from './orphans';
import { portOpen } from './processes';

const LISTEN = '0A';

/** The entries of a /proc file or folder, or null when it cannot be read (gone, or not ours to see). */
function readProc<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = readProc(() => fs.readFileSync(table, 'utf8')) ?? '';
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== LISTEN) continue;
      if (parseInt(cols[1].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** The process listening on `port`, when this user may see it: { pid, command }, else null. */
export function portHolder(port: number): { pid: number; command: string } | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  const pids = (readProc(() => fs.readdirSync('/proc')) ?? []).filter((d) => /^\d+$/.test(d));
  for (const pid of pids) {
    for (const fd of readProc(() => fs.readdirSync(`/proc/${pid}/fd`)) ?? []) {
      const link = readProc(() => fs.readlinkSync(`/proc/${pid}/fd/${fd}`)) ?? '';
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1])) return { pid: Number(pid), command: commandLine(Number(pid)) };
    }
  }
  return null;
}

export function describeHolder(port: number): string {
  const h = portHolder(port);
  if (!h) return 'a process this user cannot see (try `ss -ltnp` as root)';
  const cmd = h.command.length > 120 ? `${h.command.slice(0, 117)}...` : h.command;
  return `pid ${h.pid} (${cmd || 'command unknown'})`;
}

/** Throws, naming the port, its holder and what to do, when something already listens on 127.0.0.1:port. */
export async function ensurePortFree(port: number, what: string, remedy: string): Promise<void> {
  if (!(await portOpen(port))) return;
  throw new Error(`${what}: port ${port} is already in use by ${describeHolder(port)}. ${remedy}`);
}
