import 'reflect-metadata';
import { loadConfig, workerEnvSchema } from '@app/config';
import { ensureTopicsOn, topicSettingsFrom } from '@app/kafka';
import { createPool, runMigrations } from '@app/persistence';

/**
 * One-shot set-up for a cluster (the Kubernetes Job, or by hand): database migrations and the Kafka topics with
 * their partition count, replication factor and min.insync.replicas. Idempotent, so it is safe to run again;
 * the apps do the same at start-up, so a local run needs nothing else.
 */
async function setup() {
  const config = loadConfig(workerEnvSchema);
  const pool = createPool(config.DATABASE_URL, 1, 'plant-store-setup');
  try {
    const applied = await runMigrations(pool, (m) => console.log(`applying ${m}`));
    console.log(applied.length ? `applied migrations ${applied.join(', ')}` : 'database schema is up to date');
  } finally {
    await pool.end();
  }
  const created = await ensureTopicsOn(config.KAFKA_BROKERS, topicSettingsFrom(config));
  console.log(created.length ? `created topics ${created.join(', ')}` : 'topics already exist');
}

setup().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
