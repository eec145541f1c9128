import * as amqp from 'amqplib';
import type { BrokerConnection, ConnectBroker } from '../destination';
import { channelCloseSentence, connectionSentence, returnSentence } from './amqp-errors';

interface Pending {
  messageId: string;
  /** Its routing key: one channel serves every routing key of its exchange. */
  routingKey: string;
  /** Set by the broker's basic.return, which comes before the ack of the same message. */
  returned?: string;
  settle(err: Error | null): void;
}

/**
 * One AMQP connection and one confirm channel. A publish resolves on the broker's confirm: the message is in
 * a queue (persistent, so on disk for a durable queue). Mandatory, so that a message no queue would receive
 * is returned and rejected instead of being confirmed and dropped.
 */
export const connectAmqp: ConnectBroker = async (target, guard) => {
  const { host, port } = target.hosts[0];
  const where = `${host}:${port}`;
  // The name is resolved once, through the guard, and the socket connects to that address: no second
  // resolution for a rebinding DNS server to answer differently. TLS still checks the certificate for `host`.
  const vhost = target.path || '/';
  let address: string;
  try {
    address = await guard.resolve(host);
  } catch (err) {
    throw new Error(connectionSentence(err, where, vhost), { cause: err });
  }
  const { username, password, key } = target.secrets;
  const tlsSettings = target.settings.tls ?? {};
  const socketOptions = target.tls
    ? {
        servername: host,
        ca: tlsSettings.ca,
        cert: tlsSettings.cert,
        key,
        rejectUnauthorized: tlsSettings.rejectUnauthorized ?? true,
        timeout: guard.timeoutMs,
      }
    : { timeout: guard.timeoutMs };
  // No credentials given: none passed, so amqplib uses its default (guest/guest, which RabbitMQ allows on
  // loopback only).
  const credentials = username === undefined && password === undefined ? {} : { username, password };
  let connection: amqp.ChannelModel;
  try {
    connection = await amqp.connect(
      {
        protocol: target.tls ? 'amqps' : 'amqp',
        hostname: address,
        port,
        ...credentials,
        vhost,
        heartbeat: 30,
      },
      socketOptions,
    );
  } catch (err) {
    throw new Error(connectionSentence(err, where, vhost), { cause: err });
  }

  let broken = false;
  /** Why the connection or channel ended, for the publishes it leaves unconfirmed and those after it. */
  let failure: string | undefined;
  let blocked: string | undefined;
  const pending = new Set<Pending>();
  const exchange = target.options.exchange ?? '';
  const fail = (reason: string) => {
    broken = true;
    failure ??= reason;
    for (const p of pending) p.settle(new Error(failure));
  };
  // Listeners on 'error' also keep an error event from throwing (an unhandled 'error' would end the process).
  connection.on('error', (err) => fail(connectionSentence(err, where, vhost)));
  connection.on('close', () => fail(`amqp: the connection to ${where} closed`));
  connection.on('blocked', (reason: string) => (blocked = reason));
  connection.on('unblocked', () => (blocked = undefined));

  let channel: amqp.ConfirmChannel;
  try {
    channel = await connection.createConfirmChannel();
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw new Error(`amqp: could not open a channel on ${where}: ${err.message}`, { cause: err });
  }
  // A publish to an exchange that is not there closes the channel (404): 'error' says why, then 'close'.
  channel.on('error', (err) => fail(channelCloseSentence(err.message, exchange)));
  channel.on('close', () => fail('amqp: the channel closed'));
  channel.on('return', (msg: amqp.Message) => {
    const id = msg.properties.messageId;
    const p = [...pending].find((q) => q.messageId === id && q.returned === undefined);
    // basic.return's fields (amqplib's types describe a delivery's)
    const { replyCode, replyText } = msg.fields as unknown as { replyCode: number; replyText: string };
    if (p) p.returned = returnSentence(replyCode, replyText, exchange, p.routingKey);
  });

  const connectionApi: BrokerConnection = {
    get broken() {
      return broken;
    },
    publish(message, to) {
      const routingKey = to.options.routingKey ?? '';
      if (broken) return Promise.reject(new Error(failure ?? 'amqp: the connection is closed'));
      return new Promise<string>((resolve, reject) => {
        const p: Pending = {
          messageId: message.messageId,
          routingKey,
          settle(err) {
            if (!pending.delete(p)) return; // settled already
            clearTimeout(timer);
            if (err) reject(err);
            else resolve(`amqp confirmed: ${exchangeOf(exchange)}, routing key "${routingKey}"`);
          },
        };
        pending.add(p);
        const timer = setTimeout(() => {
          const why = blocked ? `: the broker blocks publishing (${blocked})` : '';
          p.settle(new Error(`amqp: the broker did not confirm the message within ${guard.timeoutMs} ms${why}`));
        }, guard.timeoutMs);
        const onConfirm = (err: unknown) => {
          if (p.returned) p.settle(new Error(p.returned));
          else if (!err) p.settle(null);
          else if ((err as Error).message === 'message nacked')
            p.settle(new Error('amqp: the broker refused the message (nack)'));
          else p.settle(new Error(failure ?? `amqp: ${(err as Error).message}`));
        };
        try {
          // The return value only says the socket's buffer is full; the confirm below is what is waited for.
          channel.publish(
            exchange,
            routingKey,
            Buffer.from(message.body),
            {
              persistent: true,
              mandatory: true,
              messageId: message.messageId,
              contentType: 'application/json',
              headers: message.headers,
            },
            onConfirm,
          );
        } catch (err) {
          // amqplib throws when the channel is already closed
          fail(failure ?? `amqp: ${err.message}`);
          p.settle(new Error(failure));
        }
      });
    },
    async close() {
      broken = true;
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
  return connectionApi;
};

const exchangeOf = (exchange: string) => (exchange === '' ? 'the default exchange' : `exchange "${exchange}"`);
