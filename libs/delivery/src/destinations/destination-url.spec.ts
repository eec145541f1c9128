import {
  credentialsInUrl,
  destinationKind,
  parseBrokerUrl,
  sqsCredentialsProblem,
  sqsRegionOfHost,
  withoutCredentials,
} from './destination-url';

describe('destination URLs', () => {
  it('selects the kind by scheme and names the schemes there are for an unknown one', () => {
    expect(destinationKind('https://example.com/hook')).toEqual({ ok: true, value: 'http' });
    expect(destinationKind('MQTTS://broker/plants')).toEqual({ ok: true, value: 'mqtt' });
    expect(destinationKind('sqs+http://mq:9324/000000000000/plants')).toEqual({ ok: true, value: 'sqs' });
    const unknown = destinationKind('sftp://files/plants');
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.reason).toMatch(/"sftp", which is not one of http, https, kafka/);
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
    ['sqs://k:s@sqs.eu-west-1.amazonaws.com/', /needs the account-id\/queue-name as its path/],
    ['sqs://k:s@sqs.eu-west-1.amazonaws.com/plants', /an account-id\/queue-name that is not valid/],
    ['sqs://k:s@sqs.eu-west-1.amazonaws.com/1/a/b', /an account-id\/queue-name that is not valid/],
    ['sqs://k:s@sqs.eu-west-1.amazonaws.com/1/plants.new', /an account-id\/queue-name that is not valid/],
    [`sqs://k:s@sqs.eu-west-1.amazonaws.com/1/${'q'.repeat(76)}.fifo`, /at most 80 characters/],
    ['sqs://k:s@queue.example/1/plants', /needs \?region=<region>: its host "queue.example" does not name one/],
    ['sqs://k:s@sqs.eu-west-1.amazonaws.com/1/q?region=us-east-1', /region=us-east-1, but its host .* of eu-west-1/],
    ['sqs+http://k:s@mq:9324/1/q?region=EU%20West', /region that is not valid/],
    ['sqs+http://k:s@mq:9324/1/q?region=x&queue=y', /option "queue", which sqs\+http:\/\/ does not take \(region\)/],
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

  it('reads an SQS queue URL: HTTPS, the region from the host or ?region=, the key and secret as secrets', () => {
    const aws = parseBrokerUrl('sqs://AKIAEXAMPLE:s%2Fcr%2Bt@sqs.eu-west-1.amazonaws.com/123456789012/plants.fifo');
    expect(aws.ok && aws.value).toMatchObject({
      kind: 'sqs',
      tls: true,
      hosts: [{ host: 'sqs.eu-west-1.amazonaws.com', port: 443 }],
      path: '123456789012/plants.fifo',
      options: { region: 'eu-west-1' },
      secrets: { username: 'AKIAEXAMPLE', password: 's/cr+t' },
    });
    const local = parseBrokerUrl('sqs+http://k:s@127.0.0.1:9324/000000000000/plants?region=elasticmq');
    expect(local.ok && local.value).toMatchObject({
      tls: false,
      hosts: [{ host: '127.0.0.1', port: 9324 }],
      options: { region: 'elasticmq' },
    });
    expect(parseBrokerUrl('sqs+http://k:s@localstack/000000000000/q?region=us-east-1').ok && 80).toBe(80);
    // The stored URL has no credentials: they come as secrets, and the gateway refuses an SQS URL without them.
    expect(parseBrokerUrl('sqs://sqs.us-east-2.amazonaws.com/1/q').ok).toBe(true);
    expect(sqsCredentialsProblem({ username: 'AKIA' })).toMatch(/needs the access key id and secret access key/);
    expect(sqsCredentialsProblem({ username: 'AKIA', password: 's' })).toBeNull();
  });

  it('finds the region in the hosts AWS gives SQS', () => {
    expect(sqsRegionOfHost('sqs.eu-west-1.amazonaws.com')).toBe('eu-west-1');
    expect(sqsRegionOfHost('sqs.cn-north-1.amazonaws.com.cn')).toBe('cn-north-1');
    expect(sqsRegionOfHost('sqs-fips.us-gov-west-1.amazonaws.com')).toBe('us-gov-west-1');
    expect(sqsRegionOfHost('sqs.ap-south-1.api.aws')).toBe('ap-south-1');
    expect(sqsRegionOfHost('us-west-2.queue.amazonaws.com')).toBe('us-west-2');
    expect(sqsRegionOfHost('sqs.amazonaws.com')).toBeNull();
    expect(sqsRegionOfHost('localhost')).toBeNull();
  });

  it('keeps credentials out of the URL it stores and shows', () => {
    expect(withoutCredentials('amqp://user:pass@r1:5672/v?routingKey=q')).toBe('amqp://r1:5672/v?routingKey=q');
    expect(withoutCredentials('sqs+http://AKIA:s%2F@mq:9324/1/q?region=x')).toBe('sqs+http://mq:9324/1/q?region=x');
    expect(withoutCredentials('https://example.com/a@b')).toBe('https://example.com/a@b');
    expect(credentialsInUrl('redis://:pw@r1/s')).toEqual({ username: '', password: 'pw' });
  });
});
