// @ts-check
// One process the local stack runs (the broker, PostgreSQL, a gateway, a worker), kept the way Kubernetes keeps a
// container: started and waited for until ready, and, with `restart: true`, restarted with a growing back-off when
// it exits on its own, while the rest keeps running. `stop()` is the only way it ends for good. The fault suite
// uses the same object with `restart: false`, to kill, pause and restart each part when it chooses.
const { EventEmitter } = require('node:events');
const { info, step } = require('./progress');
const { sleep } = require('./processes');
const { recordOwner, forgetOwner } = require('./orphans');

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30000;
/** A process that ran this long before it exited starts again after the first back-off, not the last one. */
const HEALTHY_RUN_MS = 60000;

/**
 * @typedef {object} ServiceSpec
 * @property {() => import('node:child_process').ChildProcess} spawn
 * @property {() => Promise<boolean>} ready  true once the process serves; may throw to say why not yet
 * @property {number} [readyTimeoutMs]
 * @property {NodeJS.Signals} [stopSignal]  what asks it to stop cleanly (PostgreSQL: SIGINT, "fast shutdown")
 * @property {number} [stopGraceMs]  then SIGKILL
 * @property {boolean} [restart]
 * @property {string} [owner]  profile whose run folder records this process, so a later run finds it if orphaned
 * @property {string} [logHint]  where its own log is, for messages
 * @property {boolean} [group]  spawned detached, leading a process group of its own (its children included)
 * @property {string} [stopTogether]  services with the same value are stopped at once, not one after the other:
 *   the nodes of a Kafka quorum, whose last node would otherwise wait out its grace period for a quorum gone
 */

/** Every process started and not yet stopped, in start order: what a failed or interrupted launcher stops. */
const started = new Set();

class Supervised extends EventEmitter {
  /** @param {string} name @param {ServiceSpec} spec */
  constructor(name, spec) {
    super();
    this.name = name;
    this.spec = { readyTimeoutMs: 90000, stopSignal: 'SIGTERM', stopGraceMs: 20000, restart: false, ...spec };
    /** @type {import('node:child_process').ChildProcess | null} */
    this.child = null;
    this.stopping = false;
    this.restarts = 0;
    this.backoffMs = FIRST_BACKOFF_MS;
    /** @type {NodeJS.Timeout | null} */
    this.pendingRestart = null;
  }

  get pid() {
    return this.child && this.running ? this.child.pid : undefined;
  }

  get running() {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns it and resolves once ready; if it exits or times out first, it is killed and this rejects. */
  async start() {
    this.stopping = false;
    this.starting = true;
    try {
      return await this.startOnce();
    } finally {
      this.starting = false;
    }
  }

  async startOnce() {
    started.add(this);
    const child = this.spec.spawn();
    this.child = child;
    const startedAt = Date.now();
    if (this.spec.owner) recordOwner(this.spec.owner, this.name, child.pid);
    child.once('exit', (code, signal) => this.exited(child, startedAt, code, signal));
    const deadline = startedAt + this.spec.readyTimeoutMs;
    let lastError = null;
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

  hint() {
    return this.spec.logHint ? `; see ${this.spec.logHint}` : '';
  }

  /** @param {import('node:child_process').ChildProcess} child */
  exited(child, startedAt, code, signal) {
    if (child !== this.child) return;
    this.emit('exit', { code, signal });
    if (this.stopping || this.starting) return; // a failed start is start()'s to report
    const ranMs = Date.now() - startedAt;
    if (ranMs >= HEALTHY_RUN_MS) this.backoffMs = FIRST_BACKOFF_MS;
    const what = `${this.name} exited (${exitText(code, signal)}) after ${(ranMs / 1000).toFixed(1)}s`;
    if (this.spec.restart) this.scheduleRestart(what);
    else info(what);
  }

  scheduleRestart(why) {
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
   * @param {NodeJS.Signals} sig
   */
  signal(sig, { group = false } = {}) {
    if (!this.running) return;
    if (group && this.spec.group) process.kill(-this.child.pid, sig);
    else this.child.kill(sig);
  }

  /** Resolves when the current process has exited (at once if none runs). */
  whenExited() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', () => resolve(undefined)));
  }

  /** From now on an exit is expected: no restart, no "exited" line (a terminal's Ctrl-C reaches apps first). */
  halt() {
    this.stopping = true;
    if (this.pendingRestart) clearTimeout(this.pendingRestart);
    this.pendingRestart = null;
  }

  /** Stops it for good: no restart; the stop signal, then SIGKILL after the grace period. */
  async stop() {
    this.halt();
    if (this.running) {
      const s = step(`Stopping ${this.name}`);
      await this.kill(this.child);
      s.done();
    }
    if (this.spec.owner) forgetOwner(this.spec.owner, this.name);
    started.delete(this);
  }

  /** @param {import('node:child_process').ChildProcess} child */
  async kill(child) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    const toGroup = (sig) => {
      try {
        if (this.spec.group) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        /* gone meanwhile */
      }
    };
    toGroup('SIGCONT'); // a paused process cannot act on the stop signal (nor can paused children)
    child.kill(/** @type {NodeJS.Signals} */ (this.spec.stopSignal));
    const timer = setTimeout(() => toGroup('SIGKILL'), this.spec.stopGraceMs);
    await gone;
    clearTimeout(timer);
  }
}

function exitText(code, signal) {
  return signal ? `signal ${signal}` : `code ${code}`;
}

/** Stops, newest first, everything this launcher started (also what is still starting). */
async function stopEverything() {
  for (const service of started) service.halt();
  const order = [...started].reverse();
  while (order.length > 0) {
    const together = order[0].spec.stopTogether;
    const batch = together ? order.filter((s) => s.spec.stopTogether === together) : [order[0]];
    for (const s of batch) order.splice(order.indexOf(s), 1);
    await Promise.all(batch.map((s) => s.stop().catch((err) => console.error(err))));
  }
}

module.exports = { Supervised, stopEverything };
