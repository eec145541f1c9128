import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '../../tools/harness/wait';

const ROOT = path.join(__dirname, '../..');

/** Running: a process that exited but was not yet reaped (a zombie, where no init reaps orphans) is not. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): kill(0) is the answer
  }
};

// Issue #34: a SIGTERM to `npm run fuzz` left the fuzzer's gateway and worker running. npm exits without passing
// the signal on, and the script's apps, spawned outside the supervisor's list, were not stopped either. Here a
// parent that dies without passing anything on stands for npm, and the fixture for the script (tools/run-ts.js
// runs it as it runs every `npm run` script).
describe('a script whose `npm run` is interrupted', () => {
  const started: ChildProcess[] = [];
  const pids: number[] = [];
  // Whatever a failure left running (it holds this suite's output pipe open otherwise).
  afterAll(() => {
    started.forEach((c) => c.kill('SIGKILL'));
    for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
  });

  /** Starts the fixture under run-ts.js, under a parent of its own; the pids of the parent, script and child. */
  async function startUnderParent() {
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const c = require('node:child_process').spawn(process.execPath, ['tools/run-ts.js', 'test/fixtures/interruptible-script.ts'], { stdio: ['ignore', 'inherit', 'inherit'] });
         setInterval(() => {}, 1000);`,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    started.push(parent);
    let out = '';
    parent.stdout!.on('data', (d) => (out += d));
    const found = await waitFor(
      'the fixture to start',
      () => {
        const line = out.split('\n').find((l) => l.startsWith('{'));
        return line ? (JSON.parse(line) as { script: number; child: number }) : null;
      },
      30000,
      100,
    );
    pids.push(found.script, found.child);
    return { parent, ...found };
  }

  it('stops the script and what it spawned when the process that ran it dies without a word', async () => {
    const { parent, script, child } = await startUnderParent();
    expect([alive(script), alive(child)]).toEqual([true, true]);
    parent.kill('SIGKILL'); // as npm exits on SIGTERM, passing nothing on
    await waitFor('the script and its child to stop', () => !alive(script) && !alive(child), 15000, 100);
  });

  it('stops what the script spawned when the script itself gets SIGTERM', async () => {
    const { script, child } = await startUnderParent();
    process.kill(script, 'SIGTERM');
    await waitFor('the script and its child to stop', () => !alive(script) && !alive(child), 15000, 100);
  });
});
