import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { DatabaseTls, readDatabaseUrl, SslMode, UNTRUSTED_CERTIFICATE_CODES as UNTRUSTED } from '@app/config';
import { DatabaseConnectError } from './unavailable';

/** What node-postgres is given: the URL without its TLS parameters, and the TLS options they mean (or none). */
export interface DatabaseConnection {
  connectionString: string;
  ssl: false | ConnectionOptions;
  mode: SslMode;
  rootCert?: string;
}

/**
 * libpq's sslmode, in Node's TLS options: `require` encrypts without checking who answers (unless sslrootcert
 * is given: then as verify-ca, as libpq does); `verify-ca` checks the certificate against sslrootcert but not
 * the host name; `verify-full` checks both, against sslrootcert or, without one (or with `system`), the system's
 * CAs. A file that cannot be read stops start-up with the variable and parameter named.
 */
export function databaseConnection(url: string, variable = 'DATABASE_URL'): DatabaseConnection {
  const { connectionString, tls, problems } = readDatabaseUrl(url);
  if (problems.length > 0) throw new Error(`${variable}: ${problems.join('; ')}`);
  const base = { connectionString, mode: tls.mode, rootCert: tls.rootCert };
  if (tls.mode === 'disable') return { ...base, ssl: false };
  const read = (parameter: keyof DatabaseTls, name: string) => {
    const file = tls[parameter] as string;
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new Error(`${variable}: ${name}=${file} cannot be read (${why})`, { cause: err });
    }
  };
  const ssl: ConnectionOptions = {};
  const ownCa = tls.rootCert !== undefined && tls.rootCert !== 'system';
  if (ownCa) ssl.ca = read('rootCert', 'sslrootcert');
  if (tls.cert) {
    ssl.cert = read('cert', 'sslcert');
    ssl.key = read('key', 'sslkey');
    if (tls.keyPassword) ssl.passphrase = tls.keyPassword;
  }
  const mode = tls.mode === 'require' && ownCa ? 'verify-ca' : tls.mode;
  if (mode === 'require') ssl.rejectUnauthorized = false;
  // The chain is still checked against the CA; only the name in the certificate is not compared with the host.
  if (mode === 'verify-ca') ssl.checkServerIdentity = () => undefined;
  return { ...base, ssl };
}

/**
 * Turns a TLS failure into what to do about it (which variable, which parameter); any other error is returned
 * as it is. Never shows the URL: it may carry a password.
 */
export function explainConnectError(err: unknown, c: DatabaseConnection, variable = 'DATABASE_URL'): unknown {
  const e = err as NodeJS.ErrnoException;
  const why = e?.message ?? String(err);
  const ca = c.rootCert && c.rootCert !== 'system' ? `sslrootcert (${c.rootCert})` : 'the system CAs (no sslrootcert)';
  if (e?.code && UNTRUSTED.has(e.code))
    return new DatabaseConnectError(
      `PostgreSQL's TLS certificate is not trusted (${why}) under ${variable}'s sslmode=${c.mode}: ` +
        `${variable}'s sslrootcert must name a file holding the CA that signed the server's certificate; it trusts ${ca}`,
      err,
    );
  if (e?.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return new DatabaseConnectError(
      `PostgreSQL's TLS certificate does not name the host in ${variable} (${why}): connect by a name the ` +
        'certificate holds, or use sslmode=verify-ca to check the CA only',
      err,
    );
  if (e?.code === 'CERT_HAS_EXPIRED' || e?.code === 'CERT_NOT_YET_VALID')
    return new DatabaseConnectError(`PostgreSQL's TLS certificate is not valid now (${why}): renew it`, err);
  if (/does not support SSL/i.test(why))
    return new DatabaseConnectError(
      `PostgreSQL does not accept TLS but ${variable} asks for sslmode=${c.mode}: turn on ssl in the server, ` +
        'or (on a trusted network only) use sslmode=disable',
      err,
    );
  if (/pg_hba\.conf.*no encryption/i.test(why) || /SSL off/i.test(why))
    return new DatabaseConnectError(
      `PostgreSQL refuses connections without TLS (${why}): add sslmode=verify-full and sslrootcert to ${variable}`,
      err,
    );
  if (/certificate/i.test(why) && /required|unknown ca|bad certificate/i.test(why))
    return new DatabaseConnectError(
      `PostgreSQL refused this client's certificate (${why}): check sslcert and sslkey in ${variable}`,
      err,
    );
  return err;
}
