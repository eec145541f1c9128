import net from 'node:net';
import tls from 'node:tls';
import { ISocketFactory, Kafka, logLevel, Message, Producer, SASLOptions } from 'kafkajs';
import type { BrokerTarget, ConnectBroker, ConnectGuard } from '../destination';
import { oauthClientOf } from '../../http/oauth-tokens';
import { isAuthenticationRefused, isConnectionLoss, kafkaErrorSentence } from './kafka-errors';
import { recordingPartitioner, TopicProducer } from './topic-producer';

/** kafkajs's own socket factory keeps sockets alive this way; ours does the same. */
const KEEP_ALIVE_DELAY_MS = 60_000;

/**
 * Sockets that connect only to addresses the guard allows. kafkajs connects to the bootstrap hosts and then
 * to every broker the cluster advertises in its metadata: a hostile cluster could advertise an internal
 * address, so each socket is checked, not only the URL's hosts. Node skips a socket's `lookup` for an IP
 * literal, so an advertised IP is put through the guard's lookup first and the socket connected after.
 */
export function guardedSocketFactory(guard: ConnectGuard, tlsOptions?: tls.ConnectionOptions): ISocketFactory {
  return ({ host, port, onConnect }) => {
    const raw = new net.Socket();
    // A TLS socket may wrap a socket that connects later (node's tls.connect `socket` option).
    const socket = tlsOptions
      ? tls.connect({ ...tlsOptions, socket: raw, host, servername: net.isIP(host) ? undefined : host }, onConnect)
      : raw.once('connect', onConnect);
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    if (net.isIP(host) === 0) raw.connect({ host, port, lookup: guard.lookup });
    else
      guard.lookup(host, {}, (err, address) => {
        if (err) raw.destroy(err);
        // kafkajs may have given up meanwhile (its connection timeout): connect() would revive a destroyed socket
        else if (!raw.destroyed && !socket.destroyed) raw.connect({ host: address as string, port });
      });
    return socket;
  };
}

/** TLS options for the brokers: a private CA, a client certificate and its key, when the target has them. */
function tlsOptionsOf(target: BrokerTarget): tls.ConnectionOptions | undefined {
  if (!target.tls) return undefined;
  const settings = target.settings.tls ?? {};
  return {
    ca: settings.ca,
    cert: settings.cert,
    key: target.secrets.key,
    rejectUnauthorized: settings.rejectUnauthorized ?? true,
  };
}

/** The SASL options of a target, and what to do when the broker refuses them (forget an OAuth token). */
function saslOf(target: BrokerTarget, guard: ConnectGuard): { sasl?: SASLOptions; refused(): void } {
  const mechanism = target.settings.sasl?.mechanism ?? 'plain';
  if (mechanism === 'oauthbearer') return oauthBearerOf(target, guard);
  const { username, password = '' } = target.secrets;
  const sasl = username === undefined ? undefined : ({ mechanism, username, password } as SASLOptions);
  return { sasl, refused: () => undefined };
}

/**
 * SASL OAUTHBEARER: kafkajs asks for a token for every connection it authenticates (and before the broker's
 * session expires); the token comes from the destination's `oauth2` client, through the cache and the SSRF rule
 * of HTTP receivers' tokens. A token the broker refused is forgotten, so the next connection fetches a new one.
 */
function oauthBearerOf(target: BrokerTarget, guard: ConnectGuard) {
  const client = oauthClientOf({ settings: target.settings, secrets: target.secrets });
  const tokens = guard.tokens;
  if (!client || !tokens) throw new Error('kafka: sasl oauthbearer needs destination.oauth2 and its clientSecret');
  let given = '';
  const sasl: SASLOptions = {
    mechanism: 'oauthbearer',
    oauthBearerProvider: async () => ({ value: (given = await tokens.token(client, guard.timeoutMs)) }),
  };
  return { sasl, refused: () => given && tokens.forget(client, given) };
}

/**
 * A producer to the target's topic. kafkajs retries nothing (the delivery core retries on its own schedule),
 * never creates the topic (a typo in a URL must fail, not make a topic), and waits for all in-sync replicas.
 */
export const connectKafka: ConnectBroker = async (target, guard) => {
  const tlsOptions = tlsOptionsOf(target);
  const auth = saslOf(target, guard);
  const kafka = new Kafka({
    clientId: 'plant-store-destination',
    brokers: target.hosts.map((h) => `${h.host}:${h.port}`),
    ssl: tlsOptions,
    sasl: auth.sasl,
    connectionTimeout: guard.timeoutMs,
    requestTimeout: guard.timeoutMs,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
    socketFactory: guardedSocketFactory(guard, tlsOptions),
  });
  const chosen = new WeakMap<Message, number>();
  const producer: Producer = kafka.producer({
    idempotent: false,
    allowAutoTopicCreation: false,
    createPartitioner: recordingPartitioner(chosen),
  });
  const topics = new TopicProducer(producer, chosen, guard.timeoutMs);
  let broken = false;
  // kafkajs emits this on producer.disconnect() only, never when a broker goes away: that shows as a
  // connection error on the next send, below.
  producer.on(producer.events.DISCONNECT, () => {
    broken = true;
  });

  // With retries off, one connect() tries one bootstrap host; kafkajs moves to the next host after a failure,
  // so each host of the list gets its turn before the connection is given up.
  let lastError: unknown;
  for (let attempt = 0; attempt < target.hosts.length; attempt++) {
    try {
      await producer.connect();
      lastError = undefined;
      break;
    } catch (err) {
      lastError = err;
      if (!isConnectionLoss(err)) break; // a refused password or a protocol error: another host says the same
    }
  }
  if (lastError !== undefined) {
    broken = true;
    if (isAuthenticationRefused(lastError)) auth.refused();
    await producer.disconnect().catch(() => undefined);
    throw new Error(kafkaErrorSentence(lastError, target.path), { cause: lastError });
  }

  return {
    get broken() {
      return broken;
    },
    async publish(message, to) {
      try {
        const meta = await topics.publish(to.path, { key: message.key, value: message.body, headers: message.headers });
        return `kafka acked: topic ${meta.topicName} partition ${meta.partition} offset ${meta.baseOffset}`;
      } catch (err) {
        // kafkajs would reconnect on the next send by itself; the pool opening a new connection after its
        // backoff keeps a broker that is down from being dialled at every message.
        if (isConnectionLoss(err)) broken = true;
        throw new Error(kafkaErrorSentence(err, to.path), { cause: err });
      }
    },
    async close() {
      broken = true;
      await producer.disconnect().catch(() => undefined);
    },
  };
};
