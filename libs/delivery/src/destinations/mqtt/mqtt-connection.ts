import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { connect, IClientOptions, MqttClient, Packet } from 'mqtt';
import { resolveBroker } from '../connect-guard';
import { BrokerConnection, BrokerMessage, BrokerTarget, ConnectBroker, ConnectGuard } from '../destination';

/**
 * An MQTT destination publishes at QoS 1 over MQTT 5: the PUBACK is the broker taking the message, and its reason
 * code says whether it refused it. The headers go as user properties, so a receiver can check the signature.
 */
export const connectMqtt: ConnectBroker = async (target: BrokerTarget, guard: ConnectGuard) => {
  const { host, port, where, address } = await resolveBroker(target, guard);
  const { ca, cert, rejectUnauthorized } = target.settings.tls ?? {};
  const options: IClientOptions = {
    protocol: target.tls ? 'mqtts' : 'mqtt',
    host: address,
    port,
    protocolVersion: 5,
    clean: true,
    // No reconnect of its own: the pool reconnects, and meanwhile mqtt.js would hold QoS 1 publishes unsent.
    reconnectPeriod: 0,
    connectTimeout: guard.timeoutMs,
    username: target.secrets.username,
    password: target.secrets.password,
    clientId: `plant-store-${randomBytes(8).toString('hex')}`,
    queueQoSZero: false,
    // SNI and the certificate check use the name the subscription gave, not the address dialled.
    // (mqtt.js reads an undefined rejectUnauthorized as true.)
    ...(target.tls
      ? { servername: isIP(host) ? undefined : host, ca, cert, key: target.secrets.key, rejectUnauthorized }
      : {}),
  };
  const client = connect(options);
  // Until the connection is handed over, an error after the first one must not go unheard (it would throw).
  client.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error('connack timeout')), guard.timeoutMs);
      const onConnect = () => settle();
      const onClose = () => settle(new Error(`${where} closed the connection`));
      const settle = (err?: Error) => {
        clearTimeout(timer);
        client.off('connect', onConnect).off('error', settle).off('close', onClose);
        return err ? reject(err) : resolve();
      };
      client.once('connect', onConnect).once('error', settle).once('close', onClose);
    });
  } catch (err) {
    client.end(true);
    throw new Error(`mqtt: could not connect to ${where}: ${mqttConnectReason(err)}`, { cause: err });
  }
  return new MqttBrokerConnection(client, guard.timeoutMs, where);
};

class MqttBrokerConnection implements BrokerConnection {
  private lost = false;
  /** The PUBACK of each publish in flight, by packet id: mqtt.js resolves without it. */
  private readonly acks = new Map<number, { reason?: number; text?: string }>();

  constructor(
    private readonly client: MqttClient,
    private readonly timeoutMs: number,
    private readonly where: string,
  ) {
    const lose = () => {
      this.lost = true;
      // end(true) with clean and no reconnect fails the publishes in flight at once, instead of at their timeout.
      client.end(true);
    };
    client.on('close', lose);
    client.on('error', lose);
    client.on('offline', lose);
    client.on('disconnect', lose);
    client.on('packetreceive', (p: Packet) => {
      const ack = p.cmd === 'puback' && p.messageId !== undefined ? this.acks.get(p.messageId) : undefined;
      if (ack && p.cmd === 'puback') Object.assign(ack, { reason: p.reasonCode, text: p.properties?.reasonString });
    });
  }

  get broken(): boolean {
    return this.lost || !this.client.connected;
  }

  async publish(message: BrokerMessage, to: BrokerTarget): Promise<string> {
    // Refuse rather than let mqtt.js store a QoS 1 publish for a reconnect that will not come.
    if (this.broken) throw new Error(`mqtt: the connection to ${this.where} is closed`);
    const properties = { userProperties: message.headers, contentType: 'application/json' };
    const sent = this.client.publishAsync(to.path, message.body, { qos: 1, properties });
    const id = this.client.getLastMessageId();
    const ack: { reason?: number; text?: string } = {};
    this.acks.set(id, ack);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        sent,
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            reject(new Error(`mqtt: ${this.where} did not acknowledge the message in time`));
            // Drop it from mqtt.js's in-flight table, so a broker that never acks does not grow it.
            this.client.removeOutgoingMessage(id);
          }, this.timeoutMs);
        }),
      ]);
      return `mqtt puback: topic ${to.path}${ack.reason ? ` (${pubackReason(ack.reason)})` : ''}`;
    } catch (err) {
      throw new Error(this.publishErrorSentence(err, ack), { cause: err });
    } finally {
      clearTimeout(timer);
      this.acks.delete(id);
    }
  }

  private publishErrorSentence(err: unknown, ack: { reason?: number; text?: string }): string {
    const message = (err as Error).message ?? String(err);
    if (message.startsWith('mqtt: ')) return message;
    const code = ack.reason ?? (err as { code?: unknown }).code;
    if (typeof code === 'number' && code >= 0x80)
      return `mqtt: the broker refused the message (${pubackReason(code, ack.text)})`;
    if (this.broken) return `mqtt: the connection to ${this.where} was lost before the broker acknowledged the message`;
    return `mqtt: ${message}`;
  }

  async close(): Promise<void> {
    this.lost = true;
    try {
      await this.client.endAsync(true);
    } catch {
      // Closing a client that is already gone: nothing is left to release.
    }
  }
}

/** The PUBACK reason codes of MQTT 5 (3.4.2.1); 0x10 is a success: the broker took it, nobody subscribes. */
const PUBACK_REASONS: Record<number, string> = {
  0x10: 'no matching subscribers',
  0x80: 'unspecified error',
  0x83: 'implementation specific error',
  0x87: 'not authorized',
  0x90: 'topic name invalid',
  0x91: 'packet identifier in use',
  0x97: 'quota exceeded',
  0x99: 'payload format invalid',
};

/** A PUBACK reason code as words, e.g. `reason 135, not authorized`, with the broker's reason string if any. */
export function pubackReason(code: number, text?: string): string {
  const name = PUBACK_REASONS[code] ?? 'unknown reason code';
  return `reason ${code}, ${name}${text ? `: ${text}` : ''}`;
}

/** Why a connect failed, in words: a CONNACK reason code (mqtt.js sets it as the error's code) or the socket's. */
export function mqttConnectReason(err: unknown): string {
  const e = err as { code?: unknown; message?: string };
  if (e.code === 'ECONNREFUSED') return 'the connection was refused';
  if (e.message === 'connack timeout') return 'it did not answer in time';
  if (e.code === 134 || e.code === 4) return 'the broker refused the user name or password';
  if (e.code === 135 || e.code === 5) return 'the broker refused the client (not authorized)';
  if (e.code === 132 || e.code === 1) return 'the broker does not speak MQTT 5';
  return e.message || String(err);
}
