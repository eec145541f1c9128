import { NatsError } from 'nats';
import { natsErrorSentence } from './nats-connection';

const ctx = { subject: 'plants.new', where: 'nats.example:4222' };
const natsError = (code: string, message = code) => new NatsError(message, code);

describe(natsErrorSentence.name, () => {
  it('says no stream captures the subject when JetStream has no responders', () => {
    expect(natsErrorSentence(natsError('503'), ctx)).toBe(
      'nats: no JetStream stream captures subject "plants.new"; create one (nats stream add) or choose a subject a stream captures',
    );
  });

  it('says JetStream is off when the server does not offer it', () => {
    expect(natsErrorSentence(natsError('503'), { ...ctx, noJetStream: true })).toBe(
      'nats: the server at nats.example:4222 does not have JetStream enabled',
    );
  });

  it('tells a timeout at connect from a missing ack, and from a connection lost while waiting', () => {
    expect(natsErrorSentence(natsError('TIMEOUT'), { ...ctx, connecting: true })).toBe(
      'nats: nats.example:4222 did not answer in time',
    );
    expect(natsErrorSentence(natsError('TIMEOUT'), ctx)).toBe(
      'nats: JetStream did not acknowledge the message in time',
    );
    expect(natsErrorSentence(natsError('TIMEOUT'), { ...ctx, lost: true })).toBe(
      'nats: the connection to nats.example:4222 was lost before JetStream acknowledged the message',
    );
  });

  it("gives JetStream's own refusal", () => {
    const err = Object.assign(natsError('400', 'maximum messages exceeded'), {
      api_error: { code: 503, err_code: 10077, description: 'maximum messages exceeded' },
    });
    expect(natsErrorSentence(err, ctx)).toBe('nats: JetStream refused the message (503 maximum messages exceeded)');
  });

  it('names a refused login and a refused connection', () => {
    expect(natsErrorSentence(natsError('AUTHORIZATION_VIOLATION', "'Authorization Violation'"), ctx)).toBe(
      "nats: nats.example:4222 refused the user and password ('Authorization Violation')",
    );
    expect(natsErrorSentence(natsError('CONNECTION_REFUSED'), { ...ctx, connecting: true })).toBe(
      'nats: nats.example:4222 refused the connection',
    );
  });

  it('says where a connect failed for any other reason', () => {
    expect(natsErrorSentence(new Error('unable to verify the first certificate'), { ...ctx, connecting: true })).toBe(
      'nats: could not connect to nats.example:4222: unable to verify the first certificate',
    );
  });
});
