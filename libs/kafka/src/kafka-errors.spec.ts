import { kafkaEnvSchema, loadConfig } from '@app/config';
import { explainKafkaError, KafkaAccessError } from './kafka-errors';

describe(explainKafkaError.name, () => {
  const scram = loadConfig(kafkaEnvSchema, {
    KAFKA_BROKERS: 'kafka-1:9093',
    KAFKA_SSL: 'true',
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: 'plant-store-worker',
    KAFKA_SASL_PASSWORD: 'the-password-itself',
  });
  // As kafkajs's retrier hands them over: the first failure as the cause of a non-retriable wrapper.
  const wrapped = (e: Error) =>
    Object.assign(new Error(e.message), { name: 'KafkaJSNonRetriableError', retriable: false, cause: e });
  const kafkajs = (name: string, message: string, extra: object = {}) =>
    Object.assign(new Error(message), { name, ...extra });

  it('names the user and the variables of a refused login, never the password', () => {
    const err = explainKafkaError(
      wrapped(kafkajs('KafkaJSSASLAuthenticationError', 'SASL SCRAM SHA512 authentication failed')),
      scram,
    );
    expect(err).toBeInstanceOf(KafkaAccessError);
    expect(err.message).toMatch(
      /refused the SASL SCRAM-SHA-512 login of User:plant-store-worker \(KAFKA_SASL_USERNAME\): check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/,
    );
    expect(err.message).not.toContain('the-password-itself');
  });

  it('names the ACL a denied call needed', () => {
    const denied = kafkajs('KafkaJSProtocolError', 'Not authorized to access topics', {
      type: 'TOPIC_AUTHORIZATION_FAILED',
      retriable: false,
    });
    const err = explainKafkaError(wrapped(denied), scram, {
      operation: 'WRITE',
      resource: 'TOPIC',
      name: 'plant.created.dlq',
    });
    expect(err.message).toMatch(
      /denied User:plant-store-worker .* WRITE on TOPIC plant\.created\.dlq \(TOPIC_AUTHORIZATION_FAILED\)/,
    );
  });

  it('tells an untrusted certificate, a missing client certificate and a plaintext port apart', () => {
    const tls = (code: string, message: string) => Object.assign(new Error(message), { code });
    expect(
      explainKafkaError(tls('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'), scram)
        .message,
    ).toMatch(/not trusted by the system's CAs .*set KAFKA_SSL_CA_FILE/);
    expect(
      explainKafkaError(
        tls('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', 'sslv3 alert bad certificate: SSL alert number 42'),
        scram,
      ).message,
    ).toMatch(/requires a client certificate \(mTLS\): set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE/);
    expect(explainKafkaError(tls('ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'), scram).message).toMatch(
      /does not speak TLS on that port .*KAFKA_SSL=false/,
    );
  });

  it('keeps the address for anything else, once', () => {
    const once = explainKafkaError(new Error('Connection timeout'), scram);
    expect(explainKafkaError(once, scram)).toBe(once);
    expect(once.message).toMatch(
      /^Kafka at KAFKA_BROKERS=kafka-1:9093 failed: Connection timeout\. Check KAFKA_BROKERS\.$/,
    );
  });
});
