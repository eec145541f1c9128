import { createHash } from 'node:crypto';
import { BrokerConnection, BrokerKind, BrokerMessage, BrokerTarget, ConnectBroker, ConnectGuard } from './destination';

/** A broker's pooled connection, or the wait before it is tried again. */
interface Entry {
  connection: Promise<BrokerConnection> | null;
  lastUsed: number;
  inFlight: number;
  /** Consecutive failed connects: the backoff doubles with each, from 1 s to 60 s. */
  failures: number;
  retryAt: number;
  lastError: string;
  /** The subscriptions whose current broker this is (each holds one: see `publish`). */
  owners: Set<string>;
}

const BACKOFF_MS = { first: 1_000, max: 60_000 };

/**
 * Connections to subscribers' brokers, one per broker and credentials, reused by every delivery to it, at most
 * `max` at once (the least recently used idle one is closed to make room; when every one is busy, the delivery
 * is an attempt with an error, retried on its schedule). A broker that cannot be reached is not tried again
 * before its backoff is over: its deliveries fail at once meanwhile (their subscriber's breaker counts them), so
 * a broker that is down costs the others nothing. Idle connections close after `idleMs`.
 *
 * A subscription holds one connection, its current broker's: when its deliveries go to another broker (its URL
 * was changed, by a portal link say), the one it used before is closed at once if no other subscription uses it,
 * rather than kept until idle. So one subscription changing its URL in a loop keeps one connection open, and
 * cannot fill the pool with its old ones and push the others' idle connections out.
 */
export class DestinationPool {
  private readonly entries = new Map<string, Entry>(); // in order of last use: the first is the least recent
  /** Each target's key, hashed once: a parsed target lives as long as its subscription in the worker's cache. */
  private readonly keys = new WeakMap<BrokerTarget, string>();
  /** Each subscription's current connection, by key (entries closed take their owners out). */
  private readonly ownedBy = new Map<string, string>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly connectors: Record<BrokerKind, ConnectBroker>,
    private readonly guard: ConnectGuard,
    private readonly max: number,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
    /** The longest backoff (see DestinationClientOptions.reconnectMaxMs). */
    private readonly backoffMaxMs = BACKOFF_MS.max,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(1_000, idleMs / 2)).unref();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Publishes through `target`'s connection; `owner`: the subscription the message is for. */
  async publish(target: BrokerTarget, message: BrokerMessage, owner?: string): Promise<string> {
    let key = this.keys.get(target);
    if (key === undefined) this.keys.set(target, (key = poolKey(target)));
    const entry = this.entryFor(key, target);
    if (owner !== undefined) this.own(owner, key, entry);
    entry.inFlight++; // from here: an entry being connected is in use too, and is not closed to make room
    let connection: BrokerConnection | null = null;
    try {
      connection = await this.connectionOf(entry, target);
      return await withTimeout(
        connection.publish(message, target),
        this.guard.timeoutMs,
        `${target.kind}: no answer within`,
      );
    } finally {
      entry.inFlight--;
      entry.lastUsed = this.now();
      // Lost while in use: the next delivery opens a new one (after the backoff, if that one fails too).
      if (connection?.broken && entry.connection) this.forget(entry, `${target.kind}: the connection was lost`);
    }
  }

  /** Closes every connection (the worker or gateway is stopping). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.entries.values()].map((e) => e.connection);
    this.entries.clear();
    this.ownedBy.clear();
    await Promise.all(open.map((c) => c?.then((x) => x.close()).catch(() => undefined)));
  }

  /** `owner` now uses `key`: the connection it used before is closed when it was its alone and is idle. */
  private own(owner: string, key: string, entry: Entry) {
    entry.owners.add(owner);
    const before = this.ownedBy.get(owner);
    if (before === key) return;
    this.ownedBy.set(owner, key);
    const previous = before === undefined ? undefined : this.entries.get(before);
    if (!previous) return;
    previous.owners.delete(owner);
    if (previous.owners.size > 0 || previous.inFlight > 0) return;
    this.drop(before!, previous, 'closed: its subscription sends to another broker now');
  }

  /** Takes an entry out of the pool and closes its connection. */
  private drop(key: string, entry: Entry, why: string) {
    this.entries.delete(key);
    for (const owner of entry.owners) if (this.ownedBy.get(owner) === key) this.ownedBy.delete(owner);
    this.forget(entry, why);
  }

  private entryFor(key: string, target: BrokerTarget): Entry {
    let entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key); // moved to the end: the most recently used
    } else {
      if (this.entries.size >= this.max) this.makeRoom(target);
      entry = {
        connection: null,
        lastUsed: this.now(),
        inFlight: 0,
        failures: 0,
        retryAt: 0,
        lastError: '',
        owners: new Set(),
      };
    }
    this.entries.set(key, entry);
    return entry;
  }

  private async connectionOf(entry: Entry, target: BrokerTarget): Promise<BrokerConnection> {
    if (entry.connection) {
      const open = await entry.connection.catch(() => null);
      if (open && !open.broken) return open;
      if (open) this.forget(entry, `${target.kind}: the connection was lost`);
    }
    const wait = entry.retryAt - this.now();
    if (wait > 0)
      throw new Error(`${entry.lastError}; not tried again for ${Math.ceil(wait / 1000)} s (reconnect backoff)`);
    const opening = this.connectors[target.kind](target, this.guard);
    const connecting = withTimeout(opening, this.guard.timeoutMs, `${target.kind}: no connection within`);
    entry.connection = connecting;
    try {
      const connection = await connecting;
      entry.failures = 0;
      return connection;
    } catch (err) {
      void opening.then((late) => late.close()).catch(() => undefined); // one that opens after its time is up
      entry.connection = null;
      entry.failures++;
      entry.retryAt = this.now() + Math.min(this.backoffMaxMs, BACKOFF_MS.first * 2 ** (entry.failures - 1));
      entry.lastError = connectError(target, err as NodeJS.ErrnoException);
      throw new Error(entry.lastError, { cause: err });
    }
  }

  private forget(entry: Entry, why: string) {
    const c = entry.connection;
    entry.connection = null;
    entry.lastError = why;
    void c?.then((x) => x.close()).catch(() => undefined);
  }

  /** Closes the least recently used idle connection; refuses when every one is in use. */
  private makeRoom(target: BrokerTarget) {
    for (const [key, e] of this.entries) {
      if (e.inFlight > 0) continue;
      this.drop(key, e, 'closed to make room');
      return;
    }
    throw new Error(
      `${target.kind}: all ${this.max} broker connections of this process are in use ` +
        `(DESTINATION_MAX_CONNECTIONS); the delivery is tried again on its schedule`,
    );
  }

  private closeIdle() {
    const before = this.now() - this.idleMs;
    for (const [key, e] of this.entries) {
      if (e.inFlight > 0 || e.lastUsed > before) continue;
      this.drop(key, e, 'closed after being idle');
    }
  }
}

/** One connection per broker, vhost or database, and credentials (hashed: the key holds no secret). */
export function poolKey(t: BrokerTarget): string {
  const where = t.hosts.map((h) => `${h.host}:${h.port}`).join(',');
  // AMQP: a publish to an exchange that is not there closes its channel, so each exchange has its own.
  const scope =
    t.kind === 'amqp' ? `${t.path}?${t.options.exchange ?? ''}` : t.kind === 'redis' ? (t.options.db ?? '0') : '';
  const who = createHash('sha256')
    .update(JSON.stringify([t.secrets, t.settings, t.tls]))
    .digest('base64url');
  return `${t.kind}://${where}/${scope}#${who}`;
}

function connectError(t: BrokerTarget, err: NodeJS.ErrnoException): string {
  const where = t.hosts.map((h) => `${h.host}:${h.port}`).join(',');
  if (err.code === 'ESSRFBLOCKED') return `refused by the SSRF guard: ${err.message}`;
  const why = err.message?.startsWith(`${t.kind}:`) ? err.message : `${t.kind}: ${err.code ?? err.message}`;
  return `${why} (connecting to ${where})`;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
