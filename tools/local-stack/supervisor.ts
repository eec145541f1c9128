// One process the local stack runs (the broker, PostgreSQL, a gateway, a worker), kept the way Kubernetes keeps a
// container: started and waited for until ready, and, with `restart: true`, restarted with a growing back-off when
// it exits on its own, while the rest keeps running. `stop()` is the only way it ends for good. The fault suite
// uses the same object with `restart: false`, to kill, pause and restart each part when it chooses.
import { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { forgetOwner, recordOwner } from './orphans';
import { sleep, stopSpawned } from './processes';
import { info, step } from './progress';

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30000;
/** A process that ran this long before it exited starts again after the first back-off, not the last one. */
const HEALTHY_RUN_MS = 60000;

export interface ServiceSpec {
  spawn: () => ChildProcess;
  /** true once the process serves; may throw to say why not yet */
  ready: () => Promise<boolean>;
  readyTimeoutMs?: number;
  /** what asks it to stop cleanly (PostgreSQL: SIGINT, "fast shutdown") */
  stopSignal?: NodeJS.Signals;
  /** then SIGKILL */
  stopGraceMs?: number;
  restart?: boolean;
  /** profile whose run folder records this process, so a later run finds it if orphaned */
  owner?: string;
  /** where its own log is, for messages */
  logHint?: string;
  /** spawned detached, leading a process group of its own (its children included) */
  group?: boolean;
  /**
   * services with the same value are stopped at once, not one after the other: the nodes of a Kafka quorum, whose
   * last node would otherwise wait out its grace period for a quorum gone
   */
  stopTogether?: string;
}

type Spec = ServiceSpec & Required<Pick<ServiceSpec, 'readyTimeoutMs' | 'stopSignal' | 'stopGraceMs' | 'restart'>>;

/** Every process started and not yet stopped, in start order: what a failed or interrupted launcher stops. */
const started = new Set<Supervised>();

export class Supervised extends EventEmitter {
  readonly spec: Spec;
  child: ChildProcess | null = null;
  private stopping = false;
  private starting = false;
  private restarts = 0;
  private backoffMs = FIRST_BACKOFF_MS;
  private pendingRestart: NodeJS.Timeout | null = null;

  constructor(
    readonly name: string,
    spec: ServiceSpec,
  ) {
    super();
    this.spec = { readyTimeoutMs: 90000, stopSignal: 'SIGTERM', stopGraceMs: 20000, restart: false, ...spec };
  }

  get pid(): number | undefined {
    return this.child && this.running ? this.child.pid : undefined;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns it and resolves once ready; if it exits or times out first, it is killed and this rejects. */
  async start(): Promise<this> {
    this.stopping = false;
    this.starting = true;
    try {
      return await this.startOnce();
    } finally {
      this.starting = false;
    }
  }

  private async startOnce(): Promise<this> {
    started.add(this);
    const child = this.spec.spawn();
    this.child = child;
    const startedAt = Date.now();
    if (this.spec.owner) recordOwner(this.spec.owner, this.name, child.pid);
    child.once('exit', (code, signal) => this.exited(child, startedAt, code, signal));
    const deadline = startedAt + this.spec.readyTimeoutMs;
    let lastError: Error | null = null;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `${this.name} exited while starting (${exitText(child.exitCode, child.signalCode)})${this.hint()}`,
        );
      if (this.stopping) {
        await this.kill(child);
        throw new Error(`${this.name} was stopped while starting`);
      }
      try {
        if (await this.spec.ready()) return this;
      } catch (err) {
        lastError = err;
      }
      await sleep(300);
    }
    await this.kill(child);
    throw new Error(
      `${this.name} was not ready after ${this.spec.readyTimeoutMs / 1000}s${lastError ? ` (${lastError.message})` : ''}${this.hint()}`,
    );
  }

  private hint(): string {
    return this.spec.logHint ? `; see ${this.spec.logHint}` : '';
  }

  private exited(child: ChildProcess, startedAt: number, code: number | null, signal: NodeJS.Signals | null) {
    if (child !== this.child) return;
    this.emit('exit', { code, signal });
    if (this.stopping || this.starting) return; // a failed start is start()'s to report
    const ranMs = Date.now() - startedAt;
    if (ranMs >= HEALTHY_RUN_MS) this.backoffMs = FIRST_BACKOFF_MS;
    const what = `${this.name} exited (${exitText(code, signal)}) after ${(ranMs / 1000).toFixed(1)}s`;
    if (this.spec.restart) this.scheduleRestart(what);
    else info(what);
  }

  private scheduleRestart(why: string) {
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    info(`${why}; restarting in ${delay / 1000}s (restart ${++this.restarts})${this.hint()}`);
    this.pendingRestart = setTimeout(() => {
      this.pendingRestart = null;
      if (this.stopping) return;
      this.start().then(
        () => info(`${this.name} is back (restart ${this.restarts})`),
        (err) => !this.stopping && this.scheduleRestart(`${this.name} did not come back: ${err.message}`),
      );
    }, delay);
  }

  /**
   * Sends a signal to the running process (the fault suite's SIGKILL, SIGSTOP, SIGCONT). `group`: to its whole
   * process group (a server spawned detached with its children, like PostgreSQL and its backends).
   */
  signal(sig: NodeJS.Signals, { group = false } = {}): void {
    const child = this.child;
    if (!child || !this.running) return;
    if (group && this.spec.group) process.kill(-child.pid!, sig);
    else child.kill(sig);
  }

  /** Resolves when the current process has exited (at once if none runs). */
  whenExited(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** From now on an exit is expected: no restart, no "exited" line (a terminal's Ctrl-C reaches apps first). */
  halt(): void {
    this.stopping = true;
    if (this.pendingRestart) clearTimeout(this.pendingRestart);
    this.pendingRestart = null;
  }

  /** Stops it for good: no restart; the stop signal, then SIGKILL after the grace period. */
  async stop(): Promise<void> {
    this.halt();
    if (this.child && this.running) {
      const s = step(`Stopping ${this.name}`);
      await this.kill(this.child);
      s.done();
    }
    if (this.spec.owner) forgetOwner(this.spec.owner, this.name);
    started.delete(this);
  }

  private async kill(child: ChildProcess) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    const toGroup = (sig: NodeJS.Signals) => {
      try {
        if (this.spec.group) process.kill(-child.pid!, sig);
        else child.kill(sig);
      } catch {
        /* gone meanwhile */
      }
    };
    toGroup('SIGCONT'); // a paused process cannot act on the stop signal (nor can paused children)
    child.kill(this.spec.stopSignal);
    const timer = setTimeout(() => toGroup('SIGKILL'), this.spec.stopGraceMs);
    await gone;
    clearTimeout(timer);
  }
}

function exitText(code: number | null, signal: NodeJS.Signals | null) {
  return signal ? `signal ${signal}` : `code ${code}`;
}

/** Stops, newest first, everything this launcher started (also what is still starting). */
export async function stopEverything(): Promise<void> {
  for (const service of started) service.halt();
  const order = [...started].reverse();
  while (order.length > 0) {
    const together = order[0].spec.stopTogether;
    const batch = together ? order.filter((s) => s.spec.stopTogether === together) : [order[0]];
    for (const s of batch) order.splice(order.indexOf(s), 1);
    await Promise.all(batch.map((s) => s.stop().catch((err) => console.error(err))));
  }
}

/**
 * For a script that brings up services itself (the fault suite, a benchmark, the fuzzer): Ctrl-C or SIGTERM
 * stops what it started before it exits, instead of leaving brokers and databases for the next run to reclaim.
 * `npm start` and `npm test` keep their own handlers (they also stop jest or the apps first).
 */
export function stopEverythingOnInterrupt(what: string): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      info(`${signal}: stopping what ${what} started`);
      // The apps a script spawned first (they drain into the broker and the database), with nothing supervised
      // restarting meanwhile; then what the supervisor started.
      for (const service of started) service.halt();
      void stopSpawned()
        .then(() => stopEverything())
        .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
}
