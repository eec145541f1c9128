import { credentialsInUrl, destinationKind, parseBrokerUrl, withoutCredentials } from './destination-url';

describe('destination URLs', () => {
  it('selects the kind by scheme and names the schemes there are for an unknown one', () => {
    expect(destinationKind('https://example.com/hook')).toEqual({ ok: true, value: 'http' });
    expect(destinationKind('MQTTS://broker/plants')).toEqual({ ok: true, value: 'mqtt' });
    const unknown = destinationKind('sqs://queue');
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.reason).toMatch(/"sqs", which is not one of http, https, kafka/);
    expect(destinationKind('example.com').ok).toBe(false);
  });

  it('reads a Kafka bootstrap list, its topic and its credentials', () => {
    const p = parseBrokerUrl('kafka://app:s3cr%40t@k1:9093,k2/plants.new');
    expect(p).toEqual({
      ok: true,
      value: expect.objectContaining({
        kind: 'kafka',
        tls: false,
        hosts: [
          { host: 'k1', port: 9093 },
          { host: 'k2', port: 9092 },
        ],
        path: 'plants.new',
        secrets: { username: 'app', password: 's3cr@t' },
      }),
    });
  });

  it.each([
    ['kafka://k1:9092/', /needs the topic/],
    ['kafka://k1:9092/bad topic', /topic that is not valid/],
    ['nats://n1/plants.*', /subject that is not valid/],
    ['mqtt://m1/plants/+', /topic that is not valid/],
    ['mqtt://m1/plants/%23', /topic that is not valid/],
    ['amqp://r1/', /needs \?routingKey/],
    ['amqp://r1/?routingKey=q&queue=x', /option "queue"/],
    ['nats://a:4222,b:4222/s', /takes one host/],
    ['redis://r1/stream?db=x', /db that is not a number/],
    ['kafka://k1/t#frag', /fragment/],
  ])('refuses %s, saying why', (url, why) => {
    const p = parseBrokerUrl(url);
    expect(p.ok).toBe(false);
    expect(!p.ok && p.reason).toMatch(why);
  });

  it('reads AMQP options and an IPv6 host; TLS by scheme or by settings', () => {
    const a = parseBrokerUrl('amqps://u:p@[::1]:5671/plants?exchange=shop&routingKey=new');
    expect(a.ok && a.value).toMatchObject({ kind: 'amqp', tls: true, hosts: [{ host: '::1', port: 5671 }] });
    expect(a.ok && a.value.options).toEqual({ exchange: 'shop', routingKey: 'new' });
    expect(a.ok && a.value.path).toBe('plants');
    const r = parseBrokerUrl('redis://r1/stream', { tls: { rejectUnauthorized: false } });
    expect(r.ok && r.value.tls).toBe(true);
  });

  it('keeps credentials out of the URL it stores and shows', () => {
    expect(withoutCredentials('amqp://user:pass@r1:5672/v?routingKey=q')).toBe('amqp://r1:5672/v?routingKey=q');
    expect(withoutCredentials('https://example.com/a@b')).toBe('https://example.com/a@b');
    expect(credentialsInUrl('redis://:pw@r1/s')).toEqual({ username: '', password: 'pw' });
  });
});
