/** DATABASE_URL as it may be shown in a message or a log: the password (and a key's, sslpassword) replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.searchParams.has('sslpassword')) u.searchParams.set('sslpassword', '***');
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** A start-up failure that names the variable to check, e.g. "PostgreSQL at DATABASE_URL=… : …; check DATABASE_URL". */
export const unreachable = (what: string, variable: string, shown: string, err: unknown) =>
  new Error(`${what} at ${variable}=${shown} failed: ${(err as Error).message}. Check ${variable}.`);
