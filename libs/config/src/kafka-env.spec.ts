import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kafkaEnvSchema } from './kafka-env';
import { loadConfig } from './load-config';

describe('Kafka settings', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kafka-env-'));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  const load = (env: Record<string, string>) => loadConfig(kafkaEnvSchema, env);

  it('reads each secret from its _FILE variant, without the trailing newline a mounted Secret may have', () => {
    const c = load({
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: ca,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'worker',
      KAFKA_SASL_PASSWORD_FILE: file('password', 's3cret-value\n'),
    });
    expect(c.KAFKA_SASL_PASSWORD_FILE).toBe('s3cret-value');
    expect(c.KAFKA_SSL_CA_FILE).toContain('BEGIN CERTIFICATE');
  });

  it('names the variable of a file that cannot be read or holds the wrong thing, never its contents', () => {
    expect(() => load({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: path.join(dir, 'absent.pem') })).toThrow(
      /KAFKA_SSL_CA_FILE: cannot read .*absent\.pem \(ENOENT\)/,
    );
    const notPem = file('not.pem', 'hunter2');
    let message = '';
    try {
      load({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: notPem });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/KAFKA_SSL_CA_FILE: .*not\.pem does not hold a PEM certificate/);
    expect(message).not.toContain('hunter2');
  });

  it('refuses half a set-up, naming what is missing', () => {
    expect(() => load({ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u' })).toThrow(
      /KAFKA_SASL_PASSWORD: is required with KAFKA_SASL_MECHANISM=scram-sha-256/,
    );
    expect(() => load({ KAFKA_SASL_MECHANISM: 'oauthbearer' })).toThrow(
      /KAFKA_SASL_OAUTHBEARER_TOKEN_URL: is required/,
    );
    expect(() => load({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toThrow(
      /KAFKA_SASL_USERNAME: is set but KAFKA_SASL_MECHANISM is not/,
    );
    expect(() => load({ KAFKA_SSL_CA_FILE: ca })).toThrow(/KAFKA_SSL_CA_FILE: is set but KAFKA_SSL is not true/);
    expect(() => load({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: ca })).toThrow(
      /KAFKA_SSL_KEY_FILE: a client certificate needs both/,
    );
    expect(() =>
      load({
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
        KAFKA_SASL_PASSWORD_FILE: file('p2', 'p'),
      }),
    ).toThrow(/KAFKA_SASL_PASSWORD: set KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE, not both/);
    expect(() => load({ KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(/KAFKA_SASL_MECHANISM/);
  });

  it('takes topic names from a prefix or one by one, and reads OAuth extensions as key=value pairs', () => {
    const c = load({
      KAFKA_TOPIC_PREFIX: 'team-a.',
      KAFKA_TOPIC_PLANT_CREATED_DLQ: 'team-a.dead',
      KAFKA_CREATE_TOPICS: 'false',
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'oauthbearer',
      KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'https://idp.example/token',
      KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'id',
      KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 'secret',
      KAFKA_SASL_OAUTHBEARER_EXTENSIONS: 'logicalCluster=lkc-1, identityPoolId=pool-2',
    });
    expect(c.KAFKA_TOPIC_PREFIX).toBe('team-a.');
    expect(c.KAFKA_CREATE_TOPICS).toBe(false);
    expect(c.KAFKA_SASL_OAUTHBEARER_EXTENSIONS).toEqual({ logicalCluster: 'lkc-1', identityPoolId: 'pool-2' });
    expect(() => load({ KAFKA_TOPIC_PLANT_CREATED: 'bad name' })).toThrow(/KAFKA_TOPIC_PLANT_CREATED/);
  });

  it('refuses a SASL mechanism that would send its secret in clear, unless told it is a private test network', () => {
    const plain = { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'hunter2' };
    let message = '';
    try {
      load(plain);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/KAFKA_SASL_MECHANISM: plain without KAFKA_SSL=true would send the password in clear/);
    expect(message).not.toContain('hunter2');
    expect(load({ ...plain, KAFKA_SSL: 'true' }).KAFKA_SASL_MECHANISM).toBe('plain');
    expect(load({ ...plain, KAFKA_SASL_ALLOW_PLAINTEXT: 'true' }).KAFKA_SASL_MECHANISM).toBe('plain');
    const oauth = {
      KAFKA_SASL_MECHANISM: 'oauthbearer',
      KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'https://idp.example/token',
      KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'id',
      KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 'secret',
    };
    expect(() => load(oauth)).toThrow(/oauthbearer without KAFKA_SSL=true would send the token in clear/);
    // SCRAM proves the password without sending it.
    expect(load({ ...plain, KAFKA_SASL_MECHANISM: 'scram-sha-512' }).KAFKA_SSL).toBe(false);
  });
});
