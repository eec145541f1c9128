import { randomBytes } from 'node:crypto';
import { gatewayEnvSchema, workerEnvSchema } from './env.schema';
import { ConfigError, loadConfig } from './load-config';

describe(loadConfig.name, () => {
  const token = 'a'.repeat(32);
  const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

  it('applies the documented defaults', () => {
    const config = loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, SECRETS_KEY });
    expect(config.PORT).toBe(3000);
    expect(config.KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
    expect(config.WEBHOOK_MAX_BYTES).toBe(65536);
    expect(config.PUBLISH_TIMEOUT_MS).toBe(5000);
    expect(config.ADMIN_TOKENS).toEqual([]);
  });

  it('splits comma-separated lists, so tokens can be rotated', () => {
    const config = loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: `${token}, ${'b'.repeat(20)}`, SECRETS_KEY });
    expect(config.WEBHOOK_TOKENS).toEqual([token, 'b'.repeat(20)]);
  });

  it('reads admin tokens as name:scope:token, a bare token being a write token named by its fingerprint', () => {
    const config = loadConfig(gatewayEnvSchema, {
      WEBHOOK_TOKENS: token,
      SECRETS_KEY,
      ADMIN_TOKENS: `ops:write:${'o'.repeat(20)}, read:${'r'.repeat(20)}, ${'w'.repeat(20)}`,
    });
    expect(config.ADMIN_TOKENS).toEqual([
      { name: 'ops', scope: 'write', token: 'o'.repeat(20) },
      { name: expect.stringMatching(/^token-[0-9a-f]{8}$/), scope: 'read', token: 'r'.repeat(20) },
      { name: expect.stringMatching(/^token-[0-9a-f]{8}$/), scope: 'write', token: 'w'.repeat(20) },
    ]);
    expect(() =>
      loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, SECRETS_KEY, ADMIN_TOKENS: `ops:admin:${token}` }),
    ).toThrow(/ADMIN_TOKENS: scope "admin" is neither read nor write/);
  });

  it('requires SECRETS_KEY, 32 bytes in base64, and says how to make one', () => {
    expect(() => loadConfig(workerEnvSchema, {})).toThrow(/SECRETS_KEY: is required: 32 random bytes in base64/);
    expect(() => loadConfig(workerEnvSchema, { SECRETS_KEY: 'c2hvcnQ=' })).toThrow(/openssl rand -base64 32/);
  });

  it('binds the worker’s health and metrics port to loopback unless told', () => {
    expect(loadConfig(workerEnvSchema, { SECRETS_KEY }).WORKER_METRICS_HOST).toBe('127.0.0.1');
    expect(loadConfig(workerEnvSchema, { SECRETS_KEY, WORKER_METRICS_HOST: '0.0.0.0' }).WORKER_METRICS_HOST).toBe(
      '0.0.0.0',
    );
  });

  it('names the bad variable', () => {
    expect(() => loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig(gatewayEnvSchema, {})).toThrow(/WEBHOOK_TOKENS/);
    expect(() => loadConfig(workerEnvSchema, { KAFKA_BROKERS: 'nohost' })).toThrow(ConfigError);
    expect(() => loadConfig(workerEnvSchema, { DELIVERY_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(
      /DELIVERY_ALLOW_PRIVATE_NETWORKS/,
    );
  });

  it('bounds every database query by default, the client longer than the server', () => {
    const config = loadConfig(workerEnvSchema, { SECRETS_KEY });
    expect(config.DATABASE_STATEMENT_TIMEOUT_MS).toBe(10000);
    expect(config.DATABASE_QUERY_TIMEOUT_MS).toBe(15000);
    expect(config.DATABASE_KEEPALIVE_MS).toBe(10000);
    expect(config.DATABASE_MIGRATION_TIMEOUT_MS).toBe(600000);
    expect(config.RETENTION_STATEMENT_TIMEOUT_MS).toBe(60000);
    expect(() =>
      loadConfig(gatewayEnvSchema, {
        WEBHOOK_TOKENS: token,
        SECRETS_KEY,
        DATABASE_STATEMENT_TIMEOUT_MS: '20000',
        DATABASE_QUERY_TIMEOUT_MS: '20000',
      }),
    ).toThrow(/DATABASE_QUERY_TIMEOUT_MS: must be longer than DATABASE_STATEMENT_TIMEOUT_MS/);
  });

  it('bounds the bytes of bodies held, a sender to a share that fits a body of the largest size', () => {
    const config = loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, SECRETS_KEY });
    expect(config.HTTP_BODY_BUDGET_BYTES).toBe(16 * 1024 * 1024);
    expect(config.HTTP_BODY_SENDER_SHARE_BYTES).toBe(4 * 1024 * 1024);
    const withBodies = (env: Record<string, string>) => () =>
      loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, SECRETS_KEY, ...env });
    expect(withBodies({ HTTP_BODY_BUDGET_BYTES: '1000000', HTTP_BODY_SENDER_SHARE_BYTES: '2000000' })).toThrow(
      /HTTP_BODY_SENDER_SHARE_BYTES: must be at most HTTP_BODY_BUDGET_BYTES/,
    );
    expect(withBodies({ WEBHOOK_MAX_BYTES: '8000000' })).toThrow(
      /HTTP_BODY_SENDER_SHARE_BYTES: must be at least WEBHOOK_MAX_BYTES \(8000000\)/,
    );
    expect(withBodies({ HTTP_BODY_SENDER_SHARE_BYTES: '65536' })).not.toThrow();
  });

  it('refuses a DATABASE_URL whose TLS parameters cannot mean what libpq users expect', () => {
    const withUrl = (name: string, url: string) => () => loadConfig(workerEnvSchema, { SECRETS_KEY, [name]: url });
    expect(withUrl('DATABASE_URL', 'postgresql://a@db/p?sslmode=prefer')).toThrow(/DATABASE_URL: sslmode=prefer/);
    expect(withUrl('DATABASE_MIGRATION_URL', 'postgresql://a@db/p?sslmode=verify-ca')).toThrow(
      /DATABASE_MIGRATION_URL: sslmode=verify-ca needs sslrootcert/,
    );
    expect(withUrl('DATABASE_URL', 'postgresql://a@db/p?sslmode=verify-full&sslrootcert=/ca.crt')).not.toThrow();
  });
});

describe('credentials published as examples', () => {
  const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
  const token = 'a'.repeat(32);

  it.each([
    [
      'WEBHOOK_TOKENS',
      { WEBHOOK_TOKENS: `${token},change-me-webhook-token-0001` },
      /WEBHOOK_TOKENS: token 2 is an example/,
    ],
    [
      'ADMIN_TOKENS',
      { ADMIN_TOKENS: 'change-me-admin-token-000001' },
      /ADMIN_TOKENS: the token of "token-[0-9a-f]{8}"/,
    ],
    [
      'ADMIN_TOKENS',
      { ADMIN_TOKENS: `ops:write:${token},ci:read:replace-me-with-a-read-token` },
      /"ci" is a placeholder/,
    ],
    ['SECRETS_KEY', { SECRETS_KEY: 'ZXhhbXBsZS1vbmx5LXJlcGxhY2UtbWUtMzItYnl0ZXM=' }, /SECRETS_KEY: is an example/],
    // a new sentence in base64, never shipped: still a placeholder
    ['SECRETS_KEY', { SECRETS_KEY: Buffer.from('please-change-me-before-use-0000').toString('base64') }, /placeholder/],
    ['SECRETS_PREVIOUS_KEYS', { SECRETS_PREVIOUS_KEYS: 'ZXhhbXBsZS1vbmx5LXJlcGxhY2UtbWUtMzItYnl0ZXM=' }, /example/],
  ])('refuses a known %s, says how to make a real one, and never prints it', (_, env, message) => {
    const attempt = () => loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, SECRETS_KEY, ...env });
    expect(attempt).toThrow(message);
    expect(attempt).toThrow(/openssl rand/);
    const text = (() => {
      try {
        attempt();
      } catch (err) {
        return (err as Error).message;
      }
    })();
    for (const value of Object.values(env).flatMap((v) => v.split(/[,:]/)))
      if (value.length >= 16) expect(text).not.toContain(value);
  });

  it('accepts the test suite’s tokens, npm start’s generated ones, and random keys', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const tokens = require('../../../tools/harness/tokens') as Record<string, string>;
    expect(() =>
      loadConfig(gatewayEnvSchema, {
        WEBHOOK_TOKENS: tokens.WEBHOOK_TOKEN,
        ADMIN_TOKENS: tokens.ADMIN_TOKEN,
        SECRETS_KEY: tokens.TEST_SECRETS_KEY,
      }),
    ).not.toThrow();
    for (let i = 0; i < 200; i++) {
      // as tools/start.js makes them, and as `openssl rand -base64 32` / `-hex 32` would
      const generated = randomBytes(24).toString('base64url');
      const config = {
        WEBHOOK_TOKENS: randomBytes(32).toString('hex'),
        ADMIN_TOKENS: generated,
        SECRETS_KEY: randomBytes(32).toString('base64'),
      };
      expect(() => loadConfig(gatewayEnvSchema, config)).not.toThrow();
    }
  });
});
