// `npm run test:e2e -- <suite>`: one end-to-end suite against the Kafka and PostgreSQL of an `npm start` that is
// already running, for the loop while you work: nothing to start, no type-check or lint (`npm test` does those),
// the apps built only when their sources changed. The suite gets a database of its own on that server
// (`plantstore_e2e`), so the store you are looking at keeps only your own plants; suites start their own gateway
// and worker (their own consumer groups). What they publish to plant.created also reaches the running worker,
// which stores those plants too: use a throw-away `npm start`, or `npm test -- <suite>` for a stack of its own.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { Client } from 'pg';
import { build } from './build';
import { PROFILES } from './index';
import { ROOT } from './paths';
import { localPostgresUrl } from './postgres';
import { info } from './progress';

const E2E_DATABASE = 'plantstore_e2e';

function reachable(hostPort: string, ms = 1500): Promise<boolean> {
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(':')), Number(hostPort.split(':').pop())];
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: ms });
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** A database of the suites' own on the running server, made once. */
async function suitesDatabase(serverUrl: string): Promise<string> {
  const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [E2E_DATABASE]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${E2E_DATABASE}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${E2E_DATABASE}`;
  return url.toString();
}

async function main() {
  const suites = process.argv.slice(2);
  if (suites.length === 0) {
    console.error('Name the suite to run, e.g. npm run test:e2e -- test/delivery/replay (a jest path pattern).');
    process.exit(2);
  }
  const brokers = process.env.KAFKA_BROKERS ?? `127.0.0.1:${PROFILES.dev.kafkaPort}`;
  const serverUrl = process.env.DATABASE_URL ?? localPostgresUrl(PROFILES.dev.pgPort);
  const pg = new URL(serverUrl);
  const down = [
    !(await reachable(brokers.split(',')[0])) && `Kafka at ${brokers}`,
    !(await reachable(`${pg.hostname}:${pg.port || 5432}`)) && `PostgreSQL at ${pg.hostname}:${pg.port || 5432}`,
  ].filter(Boolean);
  if (down.length > 0) {
    console.error(
      `${down.join(' and ')} did not answer. Start \`npm start\` in another terminal first (this runs suites ` +
        'against its Kafka and PostgreSQL), or run `npm test -- <suite>`, which starts a stack of its own.',
    );
    process.exit(3);
  }
  await build();
  const databaseUrl = await suitesDatabase(serverUrl);
  info(`Running ${suites.join(' ')} against Kafka ${brokers} and PostgreSQL database ${E2E_DATABASE}`);
  const jest = spawn(
    process.execPath,
    [
      require.resolve('jest/bin/jest', { paths: [ROOT] }),
      '--selectProjects',
      'e2e',
      '--runInBand',
      '--forceExit',
      ...suites,
    ],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...process.env,
        KAFKA_BROKERS: brokers,
        DATABASE_URL: databaseUrl,
        KAFKAJS_NO_PARTITIONER_WARNING: '1',
        TS_JEST_TRANSPILE_ONLY: '1',
      },
    },
  );
  process.on('SIGINT', () => jest.kill('SIGINT'));
  jest.once('exit', (code) => process.exit(code ?? 1));
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
