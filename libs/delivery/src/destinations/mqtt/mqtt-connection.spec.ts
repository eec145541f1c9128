import { mqttConnectReason, pubackReason } from './mqtt-connection';

describe(pubackReason.name, () => {
  it('names the MQTT 5 PUBACK reason codes', () => {
    expect(pubackReason(135)).toBe('reason 135, not authorized');
    expect(pubackReason(0x10)).toBe('reason 16, no matching subscribers');
    expect(pubackReason(151, 'over the limit')).toBe('reason 151, quota exceeded: over the limit');
    expect(pubackReason(200)).toBe('reason 200, unknown reason code');
  });
});

describe(mqttConnectReason.name, () => {
  const withCode = (code: unknown, message = 'x') => Object.assign(new Error(message), { code });

  it('reads the CONNACK reason codes of MQTT 5 and 3.1.1', () => {
    expect(mqttConnectReason(withCode(134))).toBe('the broker refused the user name or password');
    expect(mqttConnectReason(withCode(135))).toBe('the broker refused the client (not authorized)');
    expect(mqttConnectReason(withCode(132))).toBe('the broker does not speak MQTT 5');
  });

  it('says a refused socket and a silent broker in words', () => {
    expect(mqttConnectReason(withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'))).toBe(
      'the connection was refused',
    );
    expect(mqttConnectReason(new Error('connack timeout'))).toBe('it did not answer in time');
  });
});
