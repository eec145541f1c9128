// @ts-check
// Brings up what the environment does not already provide: Kafka unless KAFKA_BROKERS is set, PostgreSQL
// unless DATABASE_URL is set. Returns the environment for the apps and a stop() for what it started.
const { startKafka } = require('./kafka');
const { startPostgres } = require('./postgres');
const { info } = require('./progress');

const PROFILES = {
  // npm start: the usual ports, data kept between runs
  dev: { kafkaPort: 9092, controllerPort: 9093, pgPort: 55432, fresh: false },
  // npm test: its own ports and fresh data, so it never collides with a running `npm start`
  test: { kafkaPort: 19092, controllerPort: 19093, pgPort: 55433, fresh: true },
  // npm run bench:*: its own ports and fresh data again, so figures do not depend on earlier runs
  bench: { kafkaPort: 29092, controllerPort: 29093, pgPort: 55434, fresh: true },
};

async function bringUp(profileName, env = process.env) {
  const p = PROFILES[profileName];
  const stops = [];
  const out = {};
  try {
    if (env.KAFKA_BROKERS) info(`Kafka: using KAFKA_BROKERS=${env.KAFKA_BROKERS}`);
    else {
      const k = await startKafka({
        name: profileName,
        port: p.kafkaPort,
        controllerPort: p.controllerPort,
        fresh: p.fresh,
      });
      out.KAFKA_BROKERS = k.brokers.join(',');
      // Lets the end-to-end tests pause the broker (SIGSTOP) to check the gateway's 503 path.
      if (k.pid) out.LOCAL_KAFKA_PID = String(k.pid);
      stops.push(k.stop);
    }
    if (env.DATABASE_URL) info('PostgreSQL: using DATABASE_URL');
    else {
      const pg = await startPostgres({ name: profileName, port: p.pgPort, fresh: p.fresh });
      out.DATABASE_URL = pg.url;
      stops.push(pg.stop);
    }
  } catch (err) {
    await stopAll(stops);
    throw err;
  }
  return { env: out, stop: () => stopAll(stops) };
}

async function stopAll(stops) {
  for (const stop of stops.reverse()) await stop().catch((err) => console.error(err));
}

module.exports = { bringUp };
