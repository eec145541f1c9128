import { Client, ClientConfig } from 'pg';
import { DatabaseConnection, explainConnectError } from './tls';
import { DatabaseTimeoutError } from './unavailable';

type Callback = (err: Error | null, result?: unknown) => void;

/** How long a client waits for an answer, and what a timeout and a failed connect are told as. */
export interface ClientBounds {
  queryTimeoutMs: number;
  /** The variable that sets the bound, named in the timeout's message. */
  timeoutVariable: string;
  connection: DatabaseConnection;
  /** The variable holding the URL, named in a connect failure's message. */
  urlVariable: string;
}

/**
 * node-postgres's Client, with every query bounded on our side. A query the server does not answer in time
 * (frozen, cut off, a network that drops packets silently) fails with DatabaseTimeoutError and its connection is
 * destroyed: the statement may still be running there, so the connection cannot be handed to anyone else (the
 * pool drops a client that is no longer queryable). pg's own query_timeout answers the caller but keeps the
 * connection, so the next query would queue behind the hung one.
 */
export function boundedClient(bounds: ClientBounds): new (config?: ClientConfig) => Client {
  return class BoundedClient extends Client {
    constructor(config?: ClientConfig) {
      super(config);
      // A connection that dies while checked out (in a transaction) fails its queries; without a listener the
      // 'error' it also emits would end the process.
      this.on('error', () => undefined);
    }

    // Overloads as in pg: (text | config, values?, callback?). Only the callback and promise forms are used here.
    query(...args: unknown[]): never {
      const last = args[args.length - 1];
      const timer = setTimeout(() => this.abandon(), bounds.queryTimeoutMs);
      if (typeof last === 'function') {
        args[args.length - 1] = (err: Error | null, result?: unknown) => {
          clearTimeout(timer);
          (last as Callback)(err, result);
        };
        return (super.query as (...a: unknown[]) => never)(...args);
      }
      const result = (super.query as (...a: unknown[]) => unknown)(...args) as Promise<unknown> | undefined;
      if (result && typeof result.then === 'function') {
        const stop = () => clearTimeout(timer);
        result.then(stop, stop);
      } else clearTimeout(timer); // a submittable (cursor): bounded by the server's statement_timeout only
      return result as never;
    }

    connect(callback?: Parameters<Client['connect']>[0]): never {
      const explain = (err: unknown) => explainConnectError(err, bounds.connection, bounds.urlVariable) as Error;
      const connect = super.connect as unknown as (cb?: (err: Error | null) => void) => Promise<unknown> | undefined;
      const done = callback as ((err: Error | null) => void) | undefined;
      if (done) return connect.call(this, (err) => done(err && explain(err))) as never;
      return connect.call(this)!.catch((err) => {
        throw explain(err);
      }) as never;
    }

    /** Fails every query on this connection with the timeout and closes it (its socket, at once). */
    private abandon() {
      const connection = (this as unknown as { connection?: { stream?: { destroy(err: Error): void } } }).connection;
      connection?.stream?.destroy(new DatabaseTimeoutError(bounds.queryTimeoutMs, bounds.timeoutVariable));
    }
  };
}
