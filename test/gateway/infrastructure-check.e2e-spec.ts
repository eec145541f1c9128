import { Pool } from 'pg';
import { gatewayEnvSchema, loadConfig } from '@app/config';
import { createLogger } from '@app/observability';
import { runMigrations, SCHEMA_VERSION, schemaVersion } from '@app/persistence';
import { awaitInfrastructure } from '../../apps/gateway/src/lifecycle/infrastructure-check';
import { createWorkerApp } from '../../apps/worker/src/worker.app';
import * as e2e from '../../tools/harness/stack';

// The worker owns the schema and the topics; the gateway only checks, waits a bounded time, and then says
// what is missing and who creates it. Checked against an empty database of its own.
describe('the gateway start-up check', () => {
  let db: e2e.ScratchDatabase;
  let pool: Pool;
  let url: string;

  beforeAll(async () => {
    await e2e.prepareTestInfrastructure(); // the topics exist: only the schema is missing
    db = await e2e.scratchDatabase('empty', 1);
    ({ pool, url } = db);
  });

  afterAll(() => db?.drop());

  it('stops after its bounded wait, naming the schema it needs and who migrates it', async () => {
    expect(await schemaVersion(pool)).toBe(0);
    const config = loadConfig(gatewayEnvSchema, e2e.baseEnv({ DATABASE_URL: url }));
    const started = Date.now();
    await expect(awaitInfrastructure(config, createLogger('e2e', 'silent'), 1500)).rejects.toThrow(
      new RegExp(`schema at version 0, this gateway needs ${SCHEMA_VERSION}.*start the worker`),
    );
    expect(Date.now() - started).toBeLessThan(10000);
  });

  it('names the variable to check when PostgreSQL or Kafka refuses, the password hidden', async () => {
    const wrong = new URL(e2e.baseEnv().DATABASE_URL!);
    wrong.password = 'not-the-password';
    const config = loadConfig(gatewayEnvSchema, e2e.baseEnv({ DATABASE_URL: wrong.toString() }));
    const failure = awaitInfrastructure(config, createLogger('e2e', 'silent'), 500);
    await expect(failure).rejects.toThrow(/PostgreSQL unreachable at DATABASE_URL=postgresql:\/\/postgres:\*\*\*@/);
    await expect(failure).rejects.toThrow(/check DATABASE_URL and KAFKA_BROKERS/);
    await expect(failure).rejects.not.toThrow(/not-the-password/);
    // The worker, which migrates, says the same before anything starts.
    await expect(createWorkerApp(e2e.baseEnv({ DATABASE_URL: wrong.toString() }))).rejects.toThrow(
      /PostgreSQL at DATABASE_URL=postgresql:\/\/postgres:\*\*\*@.* failed: .*Check DATABASE_URL\./,
    );
  });

  it('starts once the worker has migrated', async () => {
    await runMigrations(pool);
    expect(await schemaVersion(pool)).toBe(SCHEMA_VERSION);
    const config = loadConfig(gatewayEnvSchema, e2e.baseEnv({ DATABASE_URL: url }));
    await expect(awaitInfrastructure(config, createLogger('e2e', 'silent'), 1500)).resolves.toBeUndefined();
  });
});
