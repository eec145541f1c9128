// Runs beside the other suites: its PostgreSQL server is its own, on a port freePort() chose for it.

import { readFileSync } from 'node:fs';
import { loadConfig, workerEnvSchema } from '@app/config';
import { createLogger } from '@app/observability';
import { createPool, databaseBoundsFrom, SCHEMA_VERSION, schemaVersion } from '@app/persistence';
import { prepareInfrastructure } from '../../apps/worker/src/setup/prepare';
import { OWN_PASSWORD, OwnPostgres, TestCa } from '../../tools/harness/own-postgres';
import { baseEnv } from '../../tools/harness/stack';

// DATABASE_URL with TLS as libpq users write it, against a PostgreSQL of this suite's own with ssl=on, a CA made
// now with openssl, and a pg_hba.conf that refuses plaintext. The server's certificate names `localhost` only, so
// verify-full must be given that name while verify-ca accepts 127.0.0.1.
describe('PostgreSQL over TLS (DATABASE_URL sslmode, sslrootcert, sslcert)', () => {
  const ca = new TestCa('plant-store-test-ca');
  const stranger = new TestCa('someone-else-ca');
  const server = ca.issue('localhost', ['DNS:localhost']);
  const client = ca.issue('certuser');
  const pg = new OwnPostgres({
    tlsOnly: true,
    settings: { ssl: 'on', ssl_cert_file: 'server.crt', ssl_key_file: 'server.key', ssl_ca_file: 'root.crt' },
    files: {
      'server.crt': readFileSync(server.cert, 'utf8'),
      'server.key': readFileSync(server.key, 'utf8'),
      'root.crt': readFileSync(ca.cert, 'utf8'),
    },
    hba: [
      'hostssl all certuser 127.0.0.1/32 cert', // a client certificate whose CN is the user, no password
      'hostssl all all 127.0.0.1/32 scram-sha-256',
      'hostnossl all all 127.0.0.1/32 reject',
    ],
  });
  const bounds = databaseBoundsFrom(loadConfig(workerEnvSchema, baseEnv()));
  const pools: ReturnType<typeof createPool>[] = [];
  const poolFor = (url: string) => {
    const pool = createPool({ url, max: 1, applicationName: 'tls-e2e', ...bounds });
    pools.push(pool);
    return pool;
  };
  /** Whether this session is encrypted, as the server sees it. */
  const sessionSsl = async (url: string) =>
    (await poolFor(url).query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).rows[0]
      .ssl;

  beforeAll(async () => {
    await pg.start();
    await pg.admin('CREATE ROLE certuser LOGIN; GRANT ALL ON DATABASE plantstore TO certuser');
  }, 60000);

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    await pg.stop();
    ca.remove();
    stranger.remove();
  });

  it('migrates and queries with sslmode=verify-full and sslrootcert (the worker set-up over TLS)', async () => {
    const url = pg.url(`sslmode=verify-full&sslrootcert=${ca.cert}`, 'localhost');
    const env = baseEnv({ DATABASE_URL: url });
    await prepareInfrastructure(loadConfig(workerEnvSchema, env), createLogger('tls-e2e', 'warn'));
    expect(await schemaVersion(poolFor(url))).toBe(SCHEMA_VERSION);
    expect(await sessionSsl(url)).toBe(true);
  });

  it('refuses a server whose certificate the CA in sslrootcert did not sign, naming DATABASE_URL and sslrootcert', async () => {
    const url = pg.url(`sslmode=verify-full&sslrootcert=${stranger.cert}`, 'localhost');
    const err: Error = await poolFor(url)
      .query('SELECT 1')
      .then(() => null)
      .catch((e) => e);
    expect(err?.message).toMatch(/PostgreSQL's TLS certificate is not trusted \(.+\)/);
    expect(err.message).toMatch(/DATABASE_URL's sslrootcert must name a file holding the CA/);
    expect(err.message).toContain(stranger.cert);
    expect(err.message).not.toContain(OWN_PASSWORD);

    // The worker's start-up stops with it, and shows the URL without its password.
    const setup = prepareInfrastructure(
      loadConfig(workerEnvSchema, baseEnv({ DATABASE_URL: url })),
      createLogger('tls-e2e', 'silent'),
    );
    await expect(setup).rejects.toThrow(
      /^PostgreSQL at DATABASE_URL=postgresql:\/\/postgres:\*\*\*@localhost.*not trusted/,
    );
    await expect(setup).rejects.not.toThrow(new RegExp(OWN_PASSWORD));
  });

  it('verify-full checks the host name; verify-ca does not, as in libpq', async () => {
    const err: Error = await poolFor(pg.url(`sslmode=verify-full&sslrootcert=${ca.cert}`, '127.0.0.1'))
      .query('SELECT 1')
      .catch((e) => e);
    expect(err.message).toMatch(/does not name the host in DATABASE_URL/);
    expect(await sessionSsl(pg.url(`sslmode=verify-ca&sslrootcert=${ca.cert}`, '127.0.0.1'))).toBe(true);
  });

  it('require encrypts without checking the certificate (libpq, not node-postgres, semantics)', async () => {
    // node-postgres alone would verify here and fail: the certificate is not signed by a CA this process trusts.
    expect(await sessionSsl(pg.url('sslmode=require', '127.0.0.1'))).toBe(true);
  });

  it('disable speaks plaintext, which this server refuses, and the message says what to add', async () => {
    const err: Error = await poolFor(pg.url('sslmode=disable'))
      .query('SELECT 1')
      .catch((e) => e);
    expect(err.message).toMatch(
      /refuses connections without TLS.*add sslmode=verify-full and sslrootcert to DATABASE_URL/,
    );
  });

  it('authenticates with a client certificate (sslcert, sslkey), no password', async () => {
    const url = pg.url(
      `sslmode=verify-full&sslrootcert=${ca.cert}&sslcert=${client.cert}&sslkey=${client.key}`,
      'localhost',
      'plantstore',
      'certuser',
    );
    const { rows } = await poolFor(url).query<{ who: string; ssl: boolean; cn: string }>(
      'SELECT current_user AS who, s.ssl, s.client_dn AS cn FROM pg_stat_ssl s WHERE s.pid = pg_backend_pid()',
    );
    expect(rows[0]).toEqual({ who: 'certuser', ssl: true, cn: '/CN=certuser' });
  });

  it("migrates as DATABASE_MIGRATION_URL's owner role and runs as an app role with the documented grants, no DDL", async () => {
    // docs/database.md, "A role without DDL rights", in a database of its own on this server.
    await pg.admin('CREATE DATABASE roles_e2e');
    await pg.admin(
      "CREATE ROLE plantstore_owner LOGIN PASSWORD 'owner-pw'; CREATE ROLE plantstore_app LOGIN PASSWORD 'app-pw';" +
        'GRANT CONNECT ON DATABASE roles_e2e TO plantstore_owner, plantstore_app',
    );
    await pg.admin(
      'REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT USAGE, CREATE ON SCHEMA public TO plantstore_owner;' +
        'GRANT USAGE ON SCHEMA public TO plantstore_app;' +
        'ALTER DEFAULT PRIVILEGES FOR ROLE plantstore_owner IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO plantstore_app;' +
        'ALTER DEFAULT PRIVILEGES FOR ROLE plantstore_owner IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO plantstore_app',
      'roles_e2e',
    );
    const tls = `sslmode=verify-full&sslrootcert=${ca.cert}`;
    const appUrl = pg.url(tls, 'localhost', 'roles_e2e', 'plantstore_app:app-pw');
    const env = baseEnv({
      DATABASE_URL: appUrl,
      DATABASE_MIGRATION_URL: pg.url(tls, 'localhost', 'roles_e2e', 'plantstore_owner:owner-pw'),
    });
    await prepareInfrastructure(loadConfig(workerEnvSchema, env), createLogger('tls-e2e', 'warn'));
    const app = poolFor(appUrl);
    expect(await schemaVersion(app)).toBe(SCHEMA_VERSION);
    await app.query("INSERT INTO plants (id, name, last_event_id, last_event_time) VALUES (1, 'Fern', 'e1', now())");
    await app.query("UPDATE plants SET name = 'Fern 2' WHERE id = 1");
    await app.query('DELETE FROM plants WHERE id = 1');
    await expect(app.query('CREATE TABLE intruder (x int)')).rejects.toMatchObject({ code: '42501' });
    await expect(app.query('DROP TABLE plants')).rejects.toMatchObject({ code: '42501' });
  });
});
