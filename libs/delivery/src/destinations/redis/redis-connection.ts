import { isIP } from 'node:net';
import Redis from 'ioredis';
import { resolveBroker } from '../connect-guard';
import { BrokerConnection, BrokerMessage, BrokerTarget, ConnectBroker, ConnectGuard } from '../destination';

/** The stream is trimmed to about this many entries when the destination does not say (settings.maxLen). */
const DEFAULT_MAX_LEN = 100_000;

/**
 * A Redis destination appends to a stream with XADD: the entry id it answers is the message taken for good (as far
 * as the server's persistence goes), and MAXLEN ~ keeps a stream nobody reads from growing without bound.
 */
export const connectRedis: ConnectBroker = async (target: BrokerTarget, guard: ConnectGuard) => {
  const { host, port, where, address } = await resolveBroker(target, guard);
  const { ca, cert, rejectUnauthorized } = target.settings.tls ?? {};
  const redis = new Redis({
    host: address,
    port,
    username: target.secrets.username,
    password: target.secrets.password,
    db: Number(target.options.db ?? 0),
    // SNI and the certificate check use the name the subscription gave, not the address dialled.
    tls: target.tls
      ? { servername: isIP(host) ? undefined : host, ca, cert, key: target.secrets.key, rejectUnauthorized }
      : undefined,
    lazyConnect: true,
    // No reconnect and no offline queue: the pool reconnects, and a command while disconnected fails at once.
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: guard.timeoutMs,
    commandTimeout: guard.timeoutMs,
  });
  // connect() rejects with only "Connection is closed."; the 'error' before it says why (refused, WRONGPASS).
  let cause: unknown;
  redis.on('error', (err) => (cause ??= err));
  let timer: NodeJS.Timeout | undefined;
  try {
    // connectTimeout covers the socket; this also bounds AUTH, SELECT and the ready check after it.
    await Promise.race([
      redis.connect(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('ETIMEDOUT')), guard.timeoutMs))),
    ]);
  } catch (err) {
    redis.disconnect();
    throw new Error(`redis: could not connect to ${where}: ${redisErrorReason(cause ?? err, target.path)}`, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
  }
  return new RedisBrokerConnection(redis, where);
};

class RedisBrokerConnection implements BrokerConnection {
  private lost = false;

  constructor(
    private readonly redis: Redis,
    private readonly where: string,
  ) {
    // With retryStrategy null, a closed socket is the end: 'end' follows 'close'.
    redis.on('close', () => (this.lost = true));
    redis.on('end', () => (this.lost = true));
  }

  get broken(): boolean {
    return this.lost || this.redis.status !== 'ready';
  }

  async publish(message: BrokerMessage, to: BrokerTarget): Promise<string> {
    const maxLen = Math.max(1, Math.floor(to.settings.maxLen ?? DEFAULT_MAX_LEN));
    if (this.broken) throw new Error(`redis: the connection to ${this.where} is closed`);
    const fields: string[] = ['webhook-id', message.messageId];
    for (const [name, value] of Object.entries(message.headers)) {
      // webhook-id is already first, and body is last: a header of either name would only repeat a field.
      if (!/^(webhook-id|body)$/i.test(name)) fields.push(name, value);
    }
    fields.push('body', message.body);
    try {
      const id = await this.redis.xadd(to.path, 'MAXLEN', '~', maxLen, '*', ...fields);
      return `redis xadd: stream ${to.path} id ${id}`;
    } catch (err) {
      throw new Error(`redis: ${redisErrorReason(err, to.path, this.where)}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    this.lost = true;
    try {
      await this.redis.quit();
    } catch {
      // QUIT on a connection already gone fails: drop the socket instead.
      this.redis.disconnect();
    }
  }
}

/** A Redis or ioredis error as words an operator can act on (the part after `redis: `). */
export function redisErrorReason(err: unknown, key: string, where = 'the server'): string {
  const message = (err as Error)?.message ?? String(err);
  const code = (err as { code?: string })?.code;
  const first = message.split(' ')[0];
  if (first === 'WRONGTYPE') return `the key "${key}" holds a value that is not a stream; choose another key`;
  if (first === 'WRONGPASS' || first === 'NOAUTH') return 'the user name or password was refused';
  if (first === 'NOPERM') return `the user may not XADD to "${key}" (${message})`;
  if (first === 'OOM') return `${where} is out of memory (maxmemory) and refused the write`;
  if (first === 'READONLY') return `${where} is a read-only replica; point the URL at the primary`;
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ETIMEDOUT' || message === 'ETIMEDOUT' || message === 'Command timed out')
    return `${where} did not answer in time`;
  if (/Connection is closed|Stream isn't writeable/.test(message)) return `the connection to ${where} is closed`;
  return message;
}
