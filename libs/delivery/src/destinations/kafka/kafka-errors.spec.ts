import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
} from 'kafkajs';
import { isAuthenticationRefused, isConnectionLoss, kafkaErrorSentence } from './kafka-errors';

// What kafkajs builds from a broker's error code (protocol/error.js's createErrorFromCode).
const protocolError = (type: string, message: string, retriable = true) =>
  new KafkaJSProtocolError(Object.assign(new Error(message), { type, code: 3, retriable }));

describe(kafkaErrorSentence.name, () => {
  const unknownTopic = protocolError('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition');

  it('says a topic does not exist, naming it and the type', () => {
    expect(kafkaErrorSentence(unknownTopic, 'plants')).toBe(
      'kafka: topic "plants" does not exist on the cluster (UNKNOWN_TOPIC_OR_PARTITION)',
    );
  });

  it("looks under kafkajs's retry wrappers", () => {
    const exceeded = new KafkaJSNumberOfRetriesExceeded(unknownTopic, { retryCount: 0, retryTime: 300 });
    expect(kafkaErrorSentence(exceeded, 'plants')).toContain('(UNKNOWN_TOPIC_OR_PARTITION)');
    const nonRetriable = new KafkaJSNonRetriableError(protocolError('TOPIC_AUTHORIZATION_FAILED', 'Not authorized'));
    (nonRetriable as { cause?: unknown }).cause = protocolError('TOPIC_AUTHORIZATION_FAILED', 'Not authorized');
    expect(kafkaErrorSentence(nonRetriable, 'plants')).toBe(
      'kafka: the user may not write to topic "plants" (TOPIC_AUTHORIZATION_FAILED)',
    );
  });

  it('says whether the broker refused a password or an OAuth token; either is a refusal, not a lost connection', () => {
    // kafkajs's KafkaJSSASLAuthenticationError (its typings declare no constructor argument)
    const refusal = (message: string) => Object.assign(new Error(message), { name: 'KafkaJSSASLAuthenticationError' });
    const scram = refusal('SASL SCRAM SHA512 authentication failed: bad');
    const oauth = refusal('SASL OAUTHBEARER authentication failed: invalid_token');
    expect(kafkaErrorSentence(scram, 't')).toMatch(/^kafka: the broker refused the user name or password \(/);
    expect(kafkaErrorSentence(oauth, 't')).toMatch(/^kafka: the broker refused the OAuth token \(/);
    const wrapped = new KafkaJSNonRetriableError(oauth);
    (wrapped as { cause?: unknown }).cause = oauth;
    expect([isAuthenticationRefused(wrapped), isConnectionLoss(wrapped)]).toEqual([true, false]);
  });

  it("keeps the broker's message for a type it has no sentence for", () => {
    expect(kafkaErrorSentence(protocolError('INVALID_RECORD', 'This record has failed validation'), 't')).toBe(
      'kafka: the broker answered: This record has failed validation (INVALID_RECORD)',
    );
  });

  it('names the broker that could not be reached, and why', () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:1', {
      broker: '127.0.0.1:1',
      code: 'ECONNREFUSED',
    });
    expect(kafkaErrorSentence(refused, 't')).toBe(
      'kafka: could not reach broker 127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)',
    );
    // KafkaJSConnectionClosedError: exported by kafkajs, not in its types
    const closed = Object.assign(new Error('Closed connection'), {
      name: 'KafkaJSConnectionClosedError',
      host: 'b1',
      port: 9092,
    });
    expect(kafkaErrorSentence(closed, 't')).toBe('kafka: broker b1:9092 closed the connection');
    const slow = new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out', {
      broker: 'b1:9092',
      clientId: 'plant-store-destination',
      correlationId: 7,
      createdAt: 0,
      sentAt: 0,
      pendingDuration: 0,
    });
    expect(kafkaErrorSentence(slow, 't')).toBe(
      'kafka: broker b1:9092 did not answer in time (Request Produce(key: 0, version: 7) timed out)',
    );
  });

  it('passes on what the SSRF guard said (its refusal arrives as a connection error)', () => {
    const blocked = new KafkaJSConnectionError('Connection error: kafka.internal resolves to 10.0.0.5, private', {
      broker: 'kafka.internal:9092',
      code: 'ESSRFBLOCKED',
    });
    expect(kafkaErrorSentence(blocked, 't')).toBe(
      'kafka: could not reach broker kafka.internal:9092: kafka.internal resolves to 10.0.0.5, private (ESSRFBLOCKED)',
    );
  });

  it('falls back to the message of anything else', () => {
    expect(kafkaErrorSentence(new Error('The producer is disconnected'), 't')).toBe(
      'kafka: The producer is disconnected',
    );
  });
});

describe(isConnectionLoss.name, () => {
  it('is true for lost or unreachable brokers, under the retry wrapper too', () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED', { broker: 'b:1' });
    expect(isConnectionLoss(refused)).toBe(true);
    expect(isConnectionLoss(new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 0, retryTime: 1 }))).toBe(true);
  });

  it('is false for what the broker answered', () => {
    expect(isConnectionLoss(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 'no such topic'))).toBe(false);
  });
});
