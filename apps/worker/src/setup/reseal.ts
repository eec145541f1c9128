import 'reflect-metadata';
import { loadConfig, workerEnvSchema } from '@app/config';
import { createLogger } from '@app/observability';
import { migrationPool, sealCredentials, secretBoxFrom } from '@app/persistence';

/**
 * `npm run secrets:reseal` (or this file with node): brings every stored subscriber credential under the
 * current SECRETS_KEY now, without waiting for a worker to start. Step 2 of a key rotation (see README).
 */
async function reseal() {
  const config = loadConfig(workerEnvSchema);
  const logger = createLogger('reseal', config.LOG_LEVEL);
  const { pool } = migrationPool(config, 'plant-store-reseal');
  try {
    const box = secretBoxFrom(config);
    const { sealed, resealed } = await sealCredentials(pool, box);
    logger.info(`${sealed} credentials sealed, ${resealed} re-sealed: all now under key ${box.currentKeyId}`);
  } finally {
    await pool.end();
  }
}

reseal().catch((err) => {
  createLogger('reseal', 'info').fatal(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
