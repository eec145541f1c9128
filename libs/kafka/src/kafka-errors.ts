import { connect as tlsConnect } from 'node:tls';
import { type KafkaEnv, UNTRUSTED_CERTIFICATE_CODES as UNTRUSTED } from '@app/config';
import { saslUsername, tlsOptions } from './kafka-options';

/** An ACL an app needs, as docs/kafka-security.md lists it: what a denial is reported as. */
export interface AclNeed {
  operation: 'READ' | 'WRITE' | 'CREATE' | 'DESCRIBE' | 'DESCRIBE_CONFIGS';
  resource: 'TOPIC' | 'GROUP' | 'CLUSTER';
  name: string;
}

/** A Kafka failure already put in words (explaining it again would only repeat them). */
export class ExplainedKafkaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExplainedKafkaError';
  }
}

/**
 * A failure only configuration can end (a refused login, an untrusted certificate, a missing ACL): the cause
 * and the variable (or ACL) to fix, without any secret. Nothing waits for it to pass.
 */
export class KafkaAccessError extends ExplainedKafkaError {
  constructor(message: string) {
    super(message);
    this.name = 'KafkaAccessError';
  }
}

const AUTHORIZATION = /^(TOPIC|GROUP|CLUSTER|TRANSACTIONAL_ID)_AUTHORIZATION_FAILED$/;

type Cause = Error & { code?: string; type?: string; originalError?: Error; cause?: unknown; errors?: unknown[] };

/** The error and the errors it wraps (kafkajs's retry wrappers keep the first one as `cause`/`originalError`). */
function* chain(err: unknown): Generator<Cause> {
  const seen = new Set<unknown>();
  let e = err as Cause | undefined;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    yield e;
    // KafkaJSAggregateError (a create-topics refusal) holds one error per topic.
    e = (e.cause ?? e.originalError ?? e.errors?.[0]) as Cause | undefined;
  }
}

function who(c: KafkaEnv): string {
  const user = saslUsername(c);
  if (user) return `User:${user} (KAFKA_SASL_USERNAME)`;
  if (c.KAFKA_SASL_MECHANISM === 'oauthbearer') return "the token's principal (KAFKA_SASL_OAUTHBEARER_CLIENT_ID)";
  if (c.KAFKA_SSL_CERT_FILE) return "the certificate's principal (KAFKA_SSL_CERT_FILE)";
  return 'User:ANONYMOUS (no KAFKA_SASL_MECHANISM or client certificate set)';
}

/**
 * One clear sentence for a Kafka failure that configuration causes: a refused login, an untrusted or
 * mismatched certificate, a missing client certificate, a missing ACL, a TLS/plaintext mismatch. Anything
 * else keeps its message, with the address. `need` is the ACL the failed call relied on, when the caller knows.
 */
export function explainKafkaError(err: unknown, c: KafkaEnv, need?: AclNeed): Error {
  if (err instanceof ExplainedKafkaError) return err;
  const brokers = `KAFKA_BROKERS=${c.KAFKA_BROKERS.join(',')}`;
  for (const e of chain(err)) {
    const message = String(e.message ?? '');
    if (e.name === 'OAuthTokenError') return new KafkaAccessError(message);
    if (e.name === 'KafkaJSSASLAuthenticationError') {
      const mechanism = c.KAFKA_SASL_MECHANISM?.toUpperCase();
      if (/unsupported sasl mechanism|not enabled|UnsupportedSaslMechanism/i.test(message))
        return new KafkaAccessError(
          `Kafka at ${brokers} does not accept SASL ${mechanism}: set KAFKA_SASL_MECHANISM to one its listener enables (${message})`,
        );
      const check =
        c.KAFKA_SASL_MECHANISM === 'oauthbearer'
          ? 'check KAFKA_SASL_OAUTHBEARER_TOKEN_URL, KAFKA_SASL_OAUTHBEARER_CLIENT_ID and KAFKA_SASL_OAUTHBEARER_SCOPE (the audience the broker expects)'
          : 'check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or their _FILE variants) and KAFKA_SASL_MECHANISM';
      return new KafkaAccessError(`Kafka at ${brokers} refused the SASL ${mechanism} login of ${who(c)}: ${check}`);
    }
    if (e.type && AUTHORIZATION.test(e.type)) return denied(c, e.type, need);
    // kafkajs drops FindCoordinator's error code (GROUP_AUTHORIZATION_FAILED) and keeps only this; from a broker
    // that answers everything else, a group it will not name a coordinator for is a group the principal may not use.
    if (e.name === 'KafkaJSGroupCoordinatorNotFound' && need?.resource === 'GROUP')
      return denied(
        c,
        'Kafka named no coordinator for the group: GROUP_AUTHORIZATION_FAILED, or its coordinator is down',
        need,
      );
    const tls = tlsExplanation(e, c, brokers);
    if (tls) return new KafkaAccessError(tls);
  }
  const first = [...chain(err)];
  const deepest = first[first.length - 1] ?? (err as Error);
  const text = deepest?.message ?? String(err);
  if (/closed connection|connection timeout|connection closed/i.test(text) && (!c.KAFKA_SSL || !c.KAFKA_SASL_MECHANISM))
    return new ExplainedKafkaError(
      `Kafka at ${brokers} failed: ${text}. Check KAFKA_BROKERS; a listener that expects TLS or SASL ` +
        `closes plaintext connections like this (KAFKA_SSL=${c.KAFKA_SSL}, KAFKA_SASL_MECHANISM=${c.KAFKA_SASL_MECHANISM ?? 'unset'}).`,
    );
  return new ExplainedKafkaError(`Kafka at ${brokers} failed: ${text}. Check KAFKA_BROKERS.`);
}

const denied = (c: KafkaEnv, code: string, need?: AclNeed) =>
  new KafkaAccessError(
    `Kafka denied ${who(c)} ${need ? `${need.operation} on ${need.resource} ${need.name}` : 'access'} (${code}): ` +
      'grant that ACL (docs/kafka-security.md lists what each app needs)',
  );

function tlsExplanation(e: Cause, c: KafkaEnv, brokers: string): string | null {
  const code = e.code ?? '';
  const message = String(e.message ?? '');
  if (
    UNTRUSTED.has(code) ||
    /self[- ]signed certificate|unable to verify the first certificate|unable to get local issuer/i.test(message)
  )
    return c.KAFKA_SSL_CA_FILE
      ? `Kafka's TLS certificate at ${brokers} is not signed by the CA in KAFKA_SSL_CA_FILE (${code || message}): set KAFKA_SSL_CA_FILE to the CA that signed the broker's certificate`
      : `Kafka's TLS certificate at ${brokers} is not trusted by the system's CAs (${code || message}): set KAFKA_SSL_CA_FILE to the CA that signed it (a PEM file)`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `Kafka's TLS certificate does not name the host dialled (${message}): use the host names the certificate carries in KAFKA_BROKERS`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `Kafka's TLS certificate at ${brokers} is not valid now (${code}): the broker's operator must renew it`;
  // A broker that requires a client certificate answers "certificate required" (TLS 1.3) or, as Java's does,
  // "bad certificate" both to none and to one it does not trust: which it is, our settings say.
  const refusedCertificate = /alert (bad certificate|unknown ca|certificate unknown)|alert number (42|48|46)/i;
  if (
    /certificate required|alert number 116/i.test(message) ||
    (refusedCertificate.test(message) && !c.KAFKA_SSL_CERT_FILE)
  )
    return `Kafka at ${brokers} requires a client certificate (mTLS): set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE`;
  if (refusedCertificate.test(message))
    return `Kafka at ${brokers} refused the client certificate in KAFKA_SSL_CERT_FILE (${message.replace(/^.*?(alert [a-z ]+).*$/i, '$1')}): it must be signed by a CA the broker trusts`;
  if (/wrong version number|packet length too long|EPROTO/i.test(`${message} ${code}`) && c.KAFKA_SSL)
    return `Kafka at ${brokers} does not speak TLS on that port (${code || message}): set KAFKA_SSL=false or use the broker's TLS listener in KAFKA_BROKERS`;
  return null;
}

/**
 * kafkajs retries a refused TLS handshake as if the network were down (minutes of "connection error" lines).
 * One handshake with the same options, before any client starts, says at once what is wrong with the
 * certificates. A broker that cannot be reached is left to the clients' own retries.
 */
export async function checkTls(c: KafkaEnv, timeoutMs = 5000): Promise<void> {
  const options = tlsOptions(c);
  if (!options) return;
  const [host, port] = splitHostPort(c.KAFKA_BROKERS[0]);
  const failure = await new Promise<Cause | null>((resolve) => {
    const socket = tlsConnect({ ...options, host, port: Number(port), servername: isIp(host) ? undefined : host });
    const done = (e: Cause | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(e);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.on('error', (e) => done(e as Cause));
    socket.on('end', () => done(null));
    // TLS 1.3: a broker that wants a client certificate says so just after the handshake; wait a moment for it.
    socket.on('secureConnect', () => {
      clearTimeout(timer);
      setTimeout(() => done(null), 500);
    });
  });
  if (!failure) return;
  const explained = tlsExplanation(failure, c, `KAFKA_BROKERS=${c.KAFKA_BROKERS.join(',')}`);
  if (explained) throw new KafkaAccessError(explained);
}

const splitHostPort = (b: string) => [b.slice(0, b.lastIndexOf(':')), b.slice(b.lastIndexOf(':') + 1)];
const isIp = (h: string) => /^[\d.]+$/.test(h) || h.includes(':');
