import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseConnection, explainConnectError } from './tls';
import { DatabaseConnectError, DatabaseTimeoutError, databaseProblem, isDatabaseUnavailable } from './unavailable';

describe('databaseConnection: libpq sslmode in Node TLS options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-spec-'));
  const ca = join(dir, 'ca.crt');
  writeFileSync(ca, 'CA PEM');
  writeFileSync(join(dir, 'client.crt'), 'CERT PEM');
  writeFileSync(join(dir, 'client.key'), 'KEY PEM');
  const url = (q: string) => `postgresql://app:pw@db.example:5432/plantstore?application_name=x&${q}`;

  it('takes the TLS parameters out of the URL, so node-postgres does not apply its own meaning', () => {
    const c = databaseConnection(url(`sslmode=verify-full&sslrootcert=${ca}`));
    expect(c.connectionString).toBe('postgresql://app:pw@db.example:5432/plantstore?application_name=x');
  });

  it('disable, or no sslmode: plaintext', () => {
    expect(databaseConnection(url('sslmode=disable')).ssl).toBe(false);
    expect(databaseConnection('postgresql://app:pw@db:5432/p').ssl).toBe(false);
  });

  it('verify-full checks the chain and the host name, against sslrootcert or the system CAs', () => {
    const own = databaseConnection(url(`sslmode=verify-full&sslrootcert=${ca}`)).ssl;
    expect(own).toEqual({ ca: 'CA PEM' });
    expect(databaseConnection(url('sslmode=verify-full')).ssl).toEqual({});
    expect(databaseConnection(url('sslmode=verify-full&sslrootcert=system')).ssl).toEqual({});
  });

  it('verify-ca checks the chain but not the host name', () => {
    const ssl = databaseConnection(url(`sslmode=verify-ca&sslrootcert=${ca}`)).ssl as Record<string, unknown>;
    expect(ssl.ca).toBe('CA PEM');
    expect(ssl.rejectUnauthorized).toBeUndefined();
    expect(typeof ssl.checkServerIdentity).toBe('function');
  });

  it('require encrypts without checking, unless sslrootcert is given: then as verify-ca (as libpq does)', () => {
    expect(databaseConnection(url('sslmode=require')).ssl).toEqual({ rejectUnauthorized: false });
    const withCa = databaseConnection(url(`sslmode=require&sslrootcert=${ca}`));
    expect(withCa.ssl).toMatchObject({ ca: 'CA PEM' });
    expect((withCa.ssl as Record<string, unknown>).rejectUnauthorized).toBeUndefined();
  });

  it('sends a client certificate, with the passphrase of its key', () => {
    const ssl = databaseConnection(
      url(`sslmode=verify-full&sslrootcert=${ca}&sslcert=${dir}/client.crt&sslkey=${dir}/client.key&sslpassword=k`),
    ).ssl;
    expect(ssl).toEqual({ ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM', passphrase: 'k' });
  });

  it('names the variable and the parameter of a file it cannot read, and never the password', () => {
    const read = () =>
      databaseConnection(url('sslmode=verify-full&sslrootcert=/nowhere/ca.crt'), 'DATABASE_MIGRATION_URL');
    expect(read).toThrow('DATABASE_MIGRATION_URL: sslrootcert=/nowhere/ca.crt cannot be read (ENOENT)');
    expect(read).not.toThrow(/pw/);
  });

  it('refuses sslmode values that would not protect, or cannot work', () => {
    expect(() => databaseConnection(url('sslmode=prefer'))).toThrow(/prefer falls back to plaintext/);
    expect(() => databaseConnection(url('sslmode=verify-ca'))).toThrow(/verify-ca needs sslrootcert/);
    expect(() => databaseConnection(url(`sslrootcert=${ca}`))).toThrow(/without sslmode/);
    expect(() => databaseConnection(url(`sslmode=require&sslcert=${ca}`))).toThrow(/sslcert and sslkey go together/);
  });
});

describe('explainConnectError', () => {
  const c = databaseConnection('postgresql://app:secret@db:5432/p?sslmode=require');
  const tls = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('says an untrusted certificate is a matter of DATABASE_URL and its sslrootcert', () => {
    const err = explainConnectError(tls('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'), {
      ...c,
      mode: 'verify-full',
      rootCert: '/etc/ca.crt',
    }) as Error;
    expect(err).toBeInstanceOf(DatabaseConnectError);
    expect(err.message).toMatch(/not trusted \(self-signed certificate in certificate chain\)/);
    expect(err.message).toMatch(/DATABASE_URL's sslrootcert must name a file holding the CA.*\/etc\/ca\.crt/);
    expect(err.message).not.toMatch(/secret/);
  });

  it('tells a certificate for another host, and a server without TLS, apart', () => {
    expect(
      (explainConnectError(tls('ERR_TLS_CERT_ALTNAME_INVALID', 'Hostname/IP does not match'), c) as Error).message,
    ).toMatch(/does not name the host in DATABASE_URL/);
    expect((explainConnectError(new Error('The server does not support SSL connections'), c) as Error).message).toMatch(
      /does not accept TLS but DATABASE_URL asks for sslmode=require/,
    );
  });

  it('leaves any other error as it is', () => {
    const refused = tls('ECONNREFUSED', 'connect ECONNREFUSED');
    expect(explainConnectError(refused, c)).toBe(refused);
  });
});

describe('isDatabaseUnavailable and databaseProblem', () => {
  it.each([
    ['our query timeout', new DatabaseTimeoutError(1000)],
    [
      'statement_timeout (57014)',
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    ],
    ['server shutting down (57P01)', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['too many connections (53300)', Object.assign(new Error('too many clients'), { code: '53300' })],
    ['refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['pool wait', new Error('timeout exceeded when trying to connect')],
    ['connect timeout', new Error('Connection terminated due to connection timeout', { cause: new Error('x') })],
    ['lost connection', new Error('Connection terminated unexpectedly')],
  ])('%s is unavailable: a 503 that says to retry', (_, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
    const p = databaseProblem(err)!;
    expect(p.problem.status).toBe(503);
    expect(p.headers['retry-after']).toBe('5');
  });

  it.each([
    ['a data error', Object.assign(new Error('invalid input'), { code: '22P02' })],
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a bug', new TypeError('x is undefined')],
  ])('%s is not', (_, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
    expect(databaseProblem(err)).toBeUndefined();
  });
});
