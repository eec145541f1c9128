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

  it('names the bad variable', () => {
    expect(() => loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token, PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig(gatewayEnvSchema, {})).toThrow(/WEBHOOK_TOKENS/);
    expect(() => loadConfig(workerEnvSchema, { KAFKA_BROKERS: 'nohost' })).toThrow(ConfigError);
    expect(() => loadConfig(workerEnvSchema, { DELIVERY_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(
      /DELIVERY_ALLOW_PRIVATE_NETWORKS/,
    );
  });
});
