import { isIP } from 'node:net';
import { connect, headers, NatsConnection, NatsError, TlsOptions } from 'nats';
import { resolveBroker } from '../connect-guard';
import { BrokerConnection, BrokerMessage, BrokerTarget, ConnectBroker, ConnectGuard } from '../destination';

/**
 * A NATS destination publishes through JetStream: its PubAck is what makes at-least-once hold (core NATS has no
 * ack), and the webhook-id as Nats-Msg-Id lets the stream drop a redelivery within its duplicate window.
 */
export const connectNats: ConnectBroker = async (target: BrokerTarget, guard: ConnectGuard) => {
  const { host, port, where, address } = await resolveBroker(target, guard);
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: `${isIP(address) === 6 ? `[${address}]` : address}:${port}`,
      user: target.secrets.username,
      pass: target.secrets.password,
      // null: plain, as the URL says (undefined would let nats.js upgrade, checking the certificate for no name).
      tls: target.tls ? natsTls(target, host) : null,
      timeout: guard.timeoutMs,
      // The pool reconnects (with its backoff); nats.js's own reconnect would buffer publishes meanwhile.
      reconnect: false,
      // Never follow the servers a cluster gossips: only the address the guard allowed is dialled.
      ignoreClusterUpdates: true,
      name: 'plant-store-destination',
    });
  } catch (err) {
    // nats.js fails on a null `tls` (plain, as the URL says) when the server requires TLS.
    if (!target.tls && /options\.tls/.test((err as Error)?.message))
      throw new Error(`nats: ${where} requires TLS; give the destination TLS settings`, { cause: err });
    throw new Error(natsErrorSentence(err, { subject: target.path, where, connecting: true }), { cause: err });
  }
  return new NatsBrokerConnection(nc, guard.timeoutMs, where);
};

/** nats.js (node) spreads the tls object into tls.connect, so servername and rejectUnauthorized pass through. */
function natsTls(target: BrokerTarget, host: string): TlsOptions {
  const { ca, cert, rejectUnauthorized } = target.settings.tls ?? {};
  const tls: Record<string, unknown> = { ca, cert, key: target.secrets.key, rejectUnauthorized };
  // SNI and the certificate check use the name the subscription gave, not the address dialled. For an IP,
  // `host`: nats.js upgrades an open socket without one, and Node would then check the certificate for localhost.
  if (isIP(host) === 0) tls.servername = host;
  else tls.host = host;
  for (const k of Object.keys(tls)) if (tls[k] === undefined) delete tls[k];
  return tls as TlsOptions;
}

class NatsBrokerConnection implements BrokerConnection {
  private lost = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
    private readonly where: string,
  ) {
    // With reconnect off, a lost connection closes for good: closed() settles then.
    void nc.closed().then(
      () => (this.lost = true),
      () => (this.lost = true),
    );
  }

  get broken(): boolean {
    return this.lost || this.nc.isClosed();
  }

  async publish(message: BrokerMessage, to: BrokerTarget): Promise<string> {
    if (this.broken) throw new Error(`nats: the connection to ${this.where} is closed`);
    try {
      const h = headers();
      for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
      const js = this.nc.jetstream({ timeout: this.timeoutMs });
      const ack = await js.publish(to.path, new TextEncoder().encode(message.body), {
        msgID: message.messageId,
        headers: h,
        timeout: this.timeoutMs,
      });
      return `nats jetstream acked: stream ${ack.stream} seq ${ack.seq}${ack.duplicate ? ' (duplicate)' : ''}`;
    } catch (err) {
      const noJetStream = this.nc.info?.jetstream !== true;
      // nats.js fails requests in flight with TIMEOUT when the connection closes: say it was the connection.
      const lost = this.broken;
      throw new Error(natsErrorSentence(err, { subject: to.path, where: this.where, noJetStream, lost }), {
        cause: err,
      });
    }
  }

  async close(): Promise<void> {
    this.lost = true;
    try {
      await this.nc.close();
    } catch {
      // Already closed, or closing failed: either way there is nothing left to release.
    }
  }
}

/** A NATS or JetStream error as a sentence an operator can act on. */
export function natsErrorSentence(
  err: unknown,
  ctx: { subject: string; where: string; connecting?: boolean; noJetStream?: boolean; lost?: boolean },
): string {
  const { subject, where } = ctx;
  const e = err as Partial<NatsError> & { message?: string; code?: string };
  const api = e.api_error;
  if (api) return `nats: JetStream refused the message (${api.code} ${api.description})`;
  switch (e.code) {
    case '503':
      if (ctx.noJetStream) return `nats: the server at ${where} does not have JetStream enabled`;
      return `nats: no JetStream stream captures subject "${subject}"; create one (nats stream add) or choose a subject a stream captures`;
    case 'TIMEOUT':
    case 'CONNECTION_TIMEOUT':
      if (ctx.connecting) return `nats: ${where} did not answer in time`;
      if (ctx.lost) return `nats: the connection to ${where} was lost before JetStream acknowledged the message`;
      return `nats: JetStream did not acknowledge the message in time`;
    case 'CONNECTION_REFUSED':
      return `nats: ${where} refused the connection`;
    case 'CONNECTION_CLOSED':
    case 'DISCONNECT':
      return `nats: the connection to ${where} is closed`;
    case 'AUTHORIZATION_VIOLATION':
    case 'AUTHENTICATION_EXPIRED':
    case 'ACCOUNT_EXPIRED':
      return `nats: ${where} refused the user and password (${e.message})`;
    case 'PERMISSIONS_VIOLATION':
      return `nats: the user may not publish to "${subject}" (${e.message})`;
    case 'MAX_PAYLOAD_EXCEEDED':
      return `nats: the message is larger than the server's max_payload`;
    case 'SERVER_OPT_NA':
      return `nats: ${where} does not offer what the URL asks for (${e.message}); check TLS`;
    default:
      if (ctx.connecting) return `nats: could not connect to ${where}: ${e.message || String(err)}`;
      return `nats: ${e.message || String(err)}`;
  }
}
