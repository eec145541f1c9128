// DATABASE_URL's TLS parameters as libpq users write them (sslmode, sslrootcert, sslcert, sslkey, sslpassword),
// read once here: the env schema refuses a combination that cannot work, and the pool (libs/persistence) builds
// its TLS options from the same reading. node-postgres reads these parameters itself, but not as libpq does
// (pg 8 treats sslmode=require and verify-ca as verify-full, and prefer cannot fall back to plaintext), so the
// pool takes them out of the URL and applies the libpq meaning below. See docs/database.md.

/** What each sslmode checks. `prefer` and `allow` (plaintext if TLS fails) are refused: they are no protection. */
export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The URL parameters that are ours to apply, not node-postgres's. */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword', 'ssl', 'uselibpqcompat'];

export interface DatabaseTls {
  mode: SslMode;
  /** A file with the CA certificate(s) to trust; `system` (as in libpq 16): the system's CAs. */
  rootCert?: string;
  /** A client certificate and its key (files), for a server that asks for one. */
  cert?: string;
  key?: string;
  /** The key's passphrase, when it is encrypted. */
  keyPassword?: string;
}

/** The URL without its TLS parameters (what node-postgres is given), and those parameters read as libpq would. */
export function readDatabaseUrl(url: string): { connectionString: string; tls: DatabaseTls; problems: string[] } {
  const u = new URL(url);
  const p = (name: string) => u.searchParams.get(name) ?? undefined;
  const problems: string[] = [];
  const given = p('sslmode');
  const legacy = p('ssl'); // node-postgres's own ssl=true: full verification
  let mode: SslMode = legacy === 'true' || legacy === '1' ? 'verify-full' : 'disable';
  if (given !== undefined) {
    if ((SSL_MODES as readonly string[]).includes(given)) mode = given as SslMode;
    else
      problems.push(
        `sslmode=${given} is not supported: use verify-full (or verify-ca, require), or disable` +
          (given === 'prefer' || given === 'allow'
            ? ` (${given} falls back to plaintext, so it protects nothing)`
            : ''),
      );
  }
  const tls: DatabaseTls = {
    mode,
    rootCert: p('sslrootcert'),
    cert: p('sslcert'),
    key: p('sslkey'),
    keyPassword: p('sslpassword'),
  };
  if (given === undefined && mode === 'disable' && (tls.rootCert || tls.cert || tls.key))
    problems.push('sslrootcert, sslcert or sslkey without sslmode: add sslmode=verify-full (or verify-ca)');
  if (mode === 'verify-ca' && (!tls.rootCert || tls.rootCert === 'system'))
    problems.push('sslmode=verify-ca needs sslrootcert=<file with the CA that signed the server certificate>');
  if (Boolean(tls.cert) !== Boolean(tls.key)) problems.push('sslcert and sslkey go together (a client certificate)');
  if (p('uselibpqcompat') !== undefined)
    problems.push('uselibpqcompat is not needed: sslmode already means what libpq says');
  for (const name of TLS_PARAMETERS) u.searchParams.delete(name);
  return { connectionString: u.toString(), tls, problems };
}
