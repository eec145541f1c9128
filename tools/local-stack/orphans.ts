// What the launcher started is recorded in .local/run/<profile>/<name>.json (its pid, the launcher's pid and
// command line). A launcher that was killed (SIGKILL, a closed terminal) cannot stop its broker or database;
// the next launcher of that profile finds them here and stops them before it starts its own, instead of
// silently reusing a server it knows nothing about or failing on a port that is "in use".
import fs from 'node:fs';
import path from 'node:path';
import { LOCAL } from './paths';
import { sleep } from './processes';
import { info } from './progress';

/** What the run folder says of one process it started. */
interface OwnerRecord {
  pid: number;
  launcherPid: number;
  command: string;
}

const runDir = (profile: string) => path.join(LOCAL, 'run', profile);

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM'; // exists, owned by another user (PostgreSQL runs as `postgres`)
  }
}

/** The process's command line, or '' when it is gone or unreadable. */
export function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

export function recordOwner(profile: string, name: string, pid: number | undefined): void {
  if (!pid) return;
  fs.mkdirSync(runDir(profile), { recursive: true });
  const record: OwnerRecord = { pid, launcherPid: process.pid, command: commandLine(pid) };
  fs.writeFileSync(path.join(runDir(profile), `${name}.json`), JSON.stringify(record));
}

export function forgetOwner(profile: string, name: string): void {
  fs.rmSync(path.join(runDir(profile), `${name}.json`), { force: true });
}

/**
 * Stops what an earlier launcher of this profile started and left running because it died. A process whose
 * launcher still runs is left alone (two `npm start` at once: the port check then names it).
 */
export async function reclaimOrphans(profile: string): Promise<void> {
  const dir = runDir(profile);
  if (!fs.existsSync(dir)) return;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    let record: OwnerRecord;
    try {
      record = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    } catch {
      fs.rmSync(path.join(dir, file), { force: true });
      continue;
    }
    const name = file.replace(/\.json$/, '');
    if (record.launcherPid !== process.pid && alive(record.launcherPid)) continue;
    // The same pid may since belong to something else: only a process with the recorded command is ours.
    if (alive(record.pid) && record.command && commandLine(record.pid) === record.command) {
      info(
        `${name}: stopping the one an earlier run left behind (pid ${record.pid}; its launcher ${record.launcherPid} is gone)`,
      );
      await terminate(record.pid);
    }
    fs.rmSync(path.join(dir, file), { force: true });
  }
}

async function terminate(pid: number, graceMs = 20000) {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      /* already gone */
    }
  };
  signal('SIGCONT');
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(200);
  if (alive(pid)) signal('SIGKILL');
  while (alive(pid)) await sleep(100);
}
