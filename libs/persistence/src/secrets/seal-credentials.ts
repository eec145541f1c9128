import { Pool } from 'pg';
import { SecretBox, secretHeaderContext, subscriptionContext } from './secret-box';

const COLUMNS = ['token', 'secret', 'previous_secret', 'destination_secrets'] as const;

/**
 * Brings every stored credential under the current SECRETS_KEY: seals a plain one (rows written before
 * migration 6) and re-seals one sealed under a previous key (after a rotation). Idempotent, in one transaction
 * with the rows locked, so replicas starting together do it once. A credential no configured key opens stops
 * it, naming the key: better a worker that does not start than one that signs with garbage.
 */
export async function sealCredentials(pool: Pool, box: SecretBox): Promise<{ sealed: number; resealed: number }> {
  const client = await pool.connect();
  let sealed = 0;
  let resealed = 0;
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<
      Record<(typeof COLUMNS)[number] | 'id', string | null> & { secret_headers: Record<string, string> }
    >(`SELECT id, ${COLUMNS.join(', ')}, secret_headers FROM subscriptions ORDER BY id FOR UPDATE`);
    // Sealed under the current key: the value as it is, or sealed (again) and counted.
    const current = (value: string, context: string): string | null => {
      if (!SecretBox.isSealed(value)) {
        sealed++;
        return box.seal(value, context);
      }
      if (SecretBox.keyIdOf(value) !== box.currentKeyId) {
        resealed++;
        return box.seal(box.open(value, context), context);
      }
      box.open(value, context); // proves the key still opens it
      return null;
    };
    for (const row of rows) {
      const context = subscriptionContext(row.id!);
      const next: Record<string, string | null> = {};
      for (const column of COLUMNS) {
        const value = row[column];
        if (value === null) continue;
        const changed = current(value, context);
        if (changed !== null) next[column] = changed;
      }
      // Secret headers are written sealed (migration 16 came after sealing began): only a key rotation changes them.
      const headers = Object.entries(row.secret_headers ?? {}).map(([name, value]) => {
        const changed = current(value, secretHeaderContext(row.id!, name));
        return [name, changed ?? value, changed !== null] as const;
      });
      if (headers.some(([, , changed]) => changed))
        next.secret_headers = JSON.stringify(Object.fromEntries(headers.map(([n, v]) => [n, v])));
      if (Object.keys(next).length === 0) continue;
      const sets = Object.keys(next).map((c, i) => `${c} = $${i + 2}`);
      await client.query(`UPDATE subscriptions SET ${sets.join(', ')} WHERE id = $1`, [row.id, ...Object.values(next)]);
    }
    await client.query('COMMIT');
    return { sealed, resealed };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
