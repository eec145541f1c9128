import { gatewayEnvSchema, workerEnvSchema } from './env.schema';
import { ConfigError, loadConfig } from './load-config';

describe(loadConfig.name, () => {
  const token = 'a'.repeat(32);

  it('applies the documented defaults', () => {
    const config = loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: token });
    expect(config.PORT).toBe(3000);
    expect(config.KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
    expect(config.WEBHOOK_MAX_BYTES).toBe(65536);
    expect(config.PUBLISH_TIMEOUT_MS).toBe(5000);
    expect(config.ADMIN_TOKENS).toEqual([]);
  });

  it('splits comma-separated lists, so tokens can be rotated', () => {
    const config = loadConfig(gatewayEnvSchema, { WEBHOOK_TOKENS: `${token}, ${'b'.repeat(20)}` });
    expect(config.WEBHOOK_TOKENS).toEqual([token, 'b'.repeat(20)]);
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
